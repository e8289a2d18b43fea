// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// startMember allocates the next apiserver name, writes its certificate and key files and starts
// it against etcd member etcdName. It does not wait for readiness.
func (l *Lab) startMember(ctx context.Context, o MemberOptions, etcdName string) (*memberProc, error) {
	if o.Version == "" {
		o.Version = l.o.Version
	}
	if len(o.Issuers) == 0 {
		o.Issuers = slices.Clone(l.o.Issuers)
	}
	bin, err := Binary(l.o.BinDir, o.Version, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.nMem++
	name := fmt.Sprintf("apiserver-%d", l.nMem)
	var etcdURL string
	for _, e := range l.etcd {
		if e.name == etcdName {
			etcdURL = e.clientURL
		}
	}
	l.mu.Unlock()
	if etcdURL == "" {
		return nil, fmt.Errorf("%s: no etcd member %q", name, etcdName)
	}
	ip, netns, err := l.placeOn(ctx, memberNumber(name), l.memberIP(name))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	port, err := l.freePort(ip, 6443, name)
	if err != nil {
		return nil, err
	}
	keyFile, pubFile, err := l.memberSAKey(name, o.SAKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	crt, key, err := l.servingCert(name, ip)
	if err != nil {
		return nil, err
	}
	addr := ip + ":" + strconv.Itoa(port)
	m := &memberProc{Member: Member{
		Name: name, Address: addr, URL: "https://" + addr, Version: o.Version,
		Issuers: o.Issuers, APIAudiences: slices.Clone(o.APIAudiences),
		SAKeyFile: keyFile, SAPubFiles: []string{pubFile}, EtcdName: etcdName,
		LogFile: l.path("logs", name+".log"),
	}}
	args := []string{
		"--advertise-address=" + ip,
		"--bind-address=" + ip,
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + etcdURL,
		"--client-ca-file=" + l.path("pki", "ca.crt"),
		"--tls-cert-file=" + crt,
		"--tls-private-key-file=" + key,
		"--cert-dir=" + l.path("pki"),
		"--service-account-signing-key-file=" + keyFile,
		"--service-account-key-file=" + pubFile,
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--profiling=false",
	}
	for _, iss := range o.Issuers {
		args = append(args, "--service-account-issuer="+iss)
	}
	if len(o.APIAudiences) > 0 {
		args = append(args, "--api-audiences="+strings.Join(o.APIAudiences, ","))
	}
	if l.hosts != nil {
		ka, err := l.kubeletClientArgs()
		if err != nil {
			return nil, err
		}
		args = append(args, ka...)
	}
	args = append(args, l.o.Cloud.apiserverArgs(o.Version)...)
	args = append(args, o.ExtraArgs...)
	m.Args = append([]string{bin}, args...)
	if err := pki.WriteKubeconfig(l.MemberKubeconfig(name), m.URL, "credwatch-lab-admin", l.ca.CertPEM(), l.adminCert, l.adminKey); err != nil {
		return nil, err
	}
	p, err := startProc(name, netns, bin, args, m.LogFile)
	if err != nil {
		return nil, err
	}
	m.proc = p
	l.mu.Lock()
	l.mems = append(l.mems, m)
	l.logs[name] = m.LogFile
	l.mu.Unlock()
	l.logf("lab: started %s (%s) on %s, etcd %s", name, o.Version, addr, etcdName)
	return m, nil
}

// memberSAKey resolves MemberOptions.SAKey to a private key file and its public key file.
func (l *Lab) memberSAKey(name, choice string) (keyFile, pubFile string, err error) {
	switch choice {
	case "", SAKeyShared:
		return l.SharedSAKeyFile(), l.SharedSAPubFile(), nil
	case SAKeyNew:
		keyFile, pubFile = l.path("sa", name+".key"), l.path("sa", name+".pub")
		return keyFile, pubFile, pki.NewSAKey(keyFile, pubFile)
	}
	if _, err := os.Stat(choice); err != nil {
		return "", "", fmt.Errorf("service-account key %q: want shared, new or a PEM private key file: %w", choice, err)
	}
	pubFile = l.path("sa", name+".pub")
	return choice, pubFile, pki.PublicFromPrivate(choice, pubFile)
}

// waitMember waits for the member's /readyz, bounded by Options.Wait; on failure the error carries
// the tail of its log.
func (l *Lab) waitMember(ctx context.Context, m *memberProc) error {
	ctx, cancel := context.WithTimeout(ctx, l.o.Wait)
	defer cancel()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: l.tlsc, DisableKeepAlives: true}}
	t0 := time.Now()
	for {
		if done, err := m.proc.Exited(); done {
			return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", m.Name, err, m.LogFile, proc.Tail(m.LogFile, 25))
		}
		if readyz(ctx, c, m.URL) == nil {
			l.logf("lab: %s ready after %s", m.Name, time.Since(t0).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s: %w; last lines of %s:\n%s", m.Name, l.o.Wait, ctx.Err(), m.LogFile, proc.Tail(m.LogFile, 25))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// stopMember takes the apiserver out of the load balancer and stops it.
func (l *Lab) stopMember(m *memberProc) {
	l.lb.Remove(m.Name)
	m.proc.Stop(stopGrace)
	l.mu.Lock()
	l.mems = slices.DeleteFunc(l.mems, func(x *memberProc) bool { return x == m })
	l.mu.Unlock()
	l.logf("lab: %s stopped", m.Name)
}
