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
	"time"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
	"github.com/credwatch/credwatch/pkg/lab/proc"
	"github.com/credwatch/credwatch/pkg/lab/signer"
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
	l.mu.Unlock()
	e, ok := l.etcd.Member(etcdName)
	if !ok {
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
	if l.o.ExternalSigner {
		if err := externalSignerLine(o.Version); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if m.signer, err = l.startSigner(ctx, name, netns, l.newSignerControl(keyFile)); err != nil {
			return nil, err
		}
		m.SigningEndpoint, m.SignerLogFile = m.signer.Socket(), m.signer.LogFile()
	}
	fail := func(err error) (*memberProc, error) { m.signer.Stop(stopGrace); return nil, err }
	if m.AuthenticationConfigFile, err = l.memberAuthnFile(name, o); err != nil {
		return fail(fmt.Errorf("%s: %w", name, err))
	}
	auditPolicy, auditLog, err := l.auditArgs(name)
	if err != nil {
		return fail(err)
	}
	args := apiserver.Config{
		IP: ip, Port: port, EtcdURL: e.ClientURL,
		ClientCAFile: l.path("pki", "ca.crt"), CertFile: crt, KeyFile: key, CertDir: l.path("pki"),
		SAKeyFile: keyFile, SAPubFile: pubFile, SigningEndpoint: m.SigningEndpoint,
		Issuers: o.Issuers, Audiences: o.APIAudiences, ServiceCIDR: ServiceCIDR,
		AuthenticationConfigFile: m.AuthenticationConfigFile,
		AuditPolicyFile:          auditPolicy, AuditLogPath: auditLog,
	}.Args()
	if l.hosts != nil {
		ka, err := l.kubeletClientArgs()
		if err != nil {
			return fail(err)
		}
		args = append(args, ka...)
	}
	args = append(args, l.o.Cloud.apiserverArgs(o.Version)...)
	args = append(args, o.ExtraArgs...)
	m.Args = append([]string{bin}, args...)
	if err := pki.WriteKubeconfig(l.MemberKubeconfig(name), m.URL, "credwatch-lab-admin", l.ca.CertPEM(), l.adminCert, l.adminKey); err != nil {
		return fail(err)
	}
	p, err := startProc(name, netns, bin, args, m.LogFile)
	if err != nil {
		return fail(err)
	}
	m.proc = p
	l.mu.Lock()
	l.mems = append(l.mems, m)
	l.logs[name] = m.LogFile
	if m.signer != nil {
		l.logs[m.signer.Name()] = m.signer.LogFile()
	}
	l.mu.Unlock()
	l.logf("lab: started %s (%s) on %s, etcd %s", name, o.Version, addr, etcdName)
	return m, nil
}

// newSignerControl is what a new member's signer serves: keyFile, with Options.SignerRefreshHint.
func (l *Lab) newSignerControl(keyFile string) signer.Control {
	c := signer.ForKey(keyFile)
	if l.o.SignerRefreshHint > 0 {
		c.RefreshHintSeconds = int64(l.o.SignerRefreshHint / time.Second)
	}
	return c
}

// startSigner starts the external signer of member name on its host (network namespace netns),
// serving c; its socket, control file and log are in <dir>/signers/<n>/ (short: a Unix socket
// path has at most 107 bytes).
func (l *Lab) startSigner(ctx context.Context, member, netns string, c signer.Control) (*signer.Signer, error) {
	bin, err := Binary(l.o.BinDir, DefaultVersion, ExternalSigner)
	if err != nil {
		return nil, err
	}
	n := strconv.Itoa(memberNumber(member))
	name := "signer-" + n
	s, err := signer.Start(ctx, name, l.path("signers", n), c, func(args []string, logFile string) (*proc.Proc, error) {
		return startProc(name, netns, bin, args, logFile)
	}, l.o.Wait)
	if err != nil {
		return nil, err
	}
	l.logf("lab: started %s for %s on %s", name, member, s.Socket())
	return s, nil
}

// Signer returns the external signer of a running member (Options.ExternalSigner), which a
// scenario steers (signer.Signer.Set).
func (l *Lab) Signer(member string) (*signer.Signer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.mems {
		if m.Name == member && m.signer != nil {
			return m.signer, true
		}
	}
	return nil, false
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
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: l.tlsc, DisableKeepAlives: true}}
	t0 := time.Now()
	err := m.proc.WaitUntil(ctx, "ready", l.o.Wait, 500*time.Millisecond, func(ctx context.Context) error {
		return apiserver.Readyz(ctx, c, m.URL)
	})
	if err == nil {
		l.logf("lab: %s ready after %s", m.Name, time.Since(t0).Round(time.Millisecond))
	}
	return err
}

// stopMember takes the apiserver out of the load balancer and stops it.
func (l *Lab) stopMember(m *memberProc) {
	l.lb.Remove(m.Name)
	m.proc.Stop(stopGrace)
	m.signer.Stop(stopGrace)
	l.mu.Lock()
	l.mems = slices.DeleteFunc(l.mems, func(x *memberProc) bool { return x == m })
	l.mu.Unlock()
	l.logf("lab: %s stopped", m.Name)
}
