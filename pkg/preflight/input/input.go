// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package input reads the control-plane objects credwatch preflight compares: Cluster API
// objects, kubeadm configuration files, kube-apiserver static-pod manifests and kops Cluster
// specs, from multi-document YAML files or directories of them. It keeps only the fields the
// predictions need; a kind it does not know is listed as ignored, never an error.
package input

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/pkg/limits"
)

// Set is everything read from one side (current or planned).
type Set struct {
	Files       []string
	Clusters    []Cluster
	KCPs        []KCP
	Configs     []KubeadmConfig
	Machines    []Machine
	SASecrets   []SASecret
	LegacyToken []Object // kubernetes.io/service-account-token Secrets
	LBChecks    []LBCheck
	Providers   []Provider
	Extensions  []Extension // runtime ExtensionConfigs
	Managers    []Manager   // providers' manager Deployments
	Kubeadm     []KubeadmFile
	StaticPods  []StaticPod
	// ControllerManagers are kube-controller-manager static-pod manifests.
	ControllerManagers []StaticPod
	// JWKS are public key sets given as documents (signer.go): the keys this side's members
	// verify (a signer's FetchKeys set, or the /openid/v1/jwks key-file members serve).
	JWKS []JWKS
	// AuthnConfigs are AuthenticationConfiguration documents: the --authentication-config file
	// of this side's members.
	AuthnConfigs []AuthnConfig
	Kops         []KopsCluster
	KopsGroups   []KopsGroup
	Ignored      []Object
	// Served is what each running member serves, read from a live cluster (none from files).
	Served []Served
	// Notes are what a live read could not read, for the report.
	Notes []string
	// Absent are the Secrets a live read looked for and the cluster does not have (the
	// <cluster>-sa Secret: "Secret/w1-sa"); files never say a Secret is absent.
	Absent []string
}

// Object names one document: its file, kind and name, and the line of the file it begins on
// (0 for an object read from a cluster).
type Object struct {
	File string `json:"file"`
	Line int64  `json:"line,omitempty"`
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
}

// Doc returns o itself, for the kinds that embed an Object: what document they were read from.
func (o Object) Doc() Object { return o }

func (o Object) String() string {
	if o.Name == "" {
		return o.Kind + " in " + o.File
	}
	return o.Kind + " " + o.Name + " in " + o.File
}

// Meta is the part of metadata the predictions read.
type Meta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	CreationTimestamp string            `json:"creationTimestamp,omitempty"`
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   Meta   `json:"metadata"`
}

// InputError is bad input: the file and what is wrong with it.
type InputError struct {
	File string
	Err  error
}

func (e *InputError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Load reads path, a file or a directory (its *.yaml, *.yml and *.json files, recursively, in
// lexical order; together at most limits.Dir bytes). Cancelling ctx abandons a file that
// blocks (a FIFO).
func Load(ctx context.Context, path string) (*Set, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &InputError{File: path, Err: errors.Unwrap(err)}
	}
	files := []string{path}
	if st.IsDir() {
		files = nil
		var total int64
		errTotal := fmt.Errorf("its .yaml, .yml and .json files add up to more than %s", limits.Size(limits.Dir))
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(p)) {
			case ".yaml", ".yml", ".json":
				if d.IsDir() {
					return nil
				}
				files = append(files, p)
				if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
					total += fi.Size()
				}
				if total > limits.Dir {
					return errTotal // before reading any
				}
			}
			return nil
		})
		if err != nil {
			return nil, &InputError{File: path, Err: err}
		}
		if len(files) == 0 {
			return nil, &InputError{File: path, Err: errors.New("no .yaml, .yml or .json file in the directory")}
		}
	}
	s := &Set{}
	for _, f := range files {
		b, err := userfile.ReadFile(ctx, f, limits.File)
		if err != nil {
			return nil, &InputError{File: f, Err: err}
		}
		if err := s.Add(f, b); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Add parses data, a multi-document YAML stream named file, into s.
func (s *Set) Add(file string, data []byte) error {
	s.Files = append(s.Files, file)
	for i, doc := range documents(data) {
		if err := s.addDocAt(file, doc.line, doc.data); err != nil {
			return &InputError{File: file, Err: fmt.Errorf("document %d: %w", i+1, err)}
		}
	}
	return nil
}

// Documents splits a YAML stream at its "---" lines, dropping empty documents.
func Documents(data []byte) [][]byte {
	var out [][]byte
	for _, d := range documents(data) {
		out = append(out, d.data)
	}
	return out
}

// document is one document of a YAML stream and the line (from 1) of its first line that is
// neither blank nor a comment.
type document struct {
	line int64
	data []byte
}

func documents(data []byte) []document {
	var out []document
	var cur []byte
	var n, first int64
	flush := func() {
		if first > 0 {
			out = append(out, document{first, cur})
		}
		cur, first = nil, 0
	}
	for line := range bytes.Lines(data) {
		n++
		t := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			flush()
			continue
		}
		if lt := bytes.TrimSpace(line); first == 0 && len(lt) > 0 && lt[0] != '#' {
			first = n
		}
		cur = append(cur, line...)
	}
	flush()
	return out
}

func (s *Set) addDoc(file string, doc []byte) error { return s.addDocAt(file, 0, doc) }

// addDocAt adds doc, which begins on line of file (0: not read from a file).
func (s *Set) addDocAt(file string, line int64, doc []byte) error {
	// A key given twice is ambiguous: YAML readers keep either value (this one the last), and
	// kubectl apply refuses the file.
	if _, err := yaml.YAMLToJSONStrict(doc); err != nil {
		return fmt.Errorf("malformed YAML: %w", err)
	}
	var h header
	if err := yaml.Unmarshal(doc, &h); err != nil {
		return fmt.Errorf("malformed YAML: %w", err)
	}
	if strings.HasSuffix(h.Kind, "List") {
		return s.addList(file, line, doc)
	}
	obj := Object{File: file, Line: line, Kind: h.Kind, Name: h.Metadata.Name}
	group, _, _ := strings.Cut(h.APIVersion, "/")
	parse, ok := parsers[kindKey{group, h.Kind}]
	if !ok && strings.HasPrefix(group, "infrastructure.cluster.x-k8s.io") && strings.HasSuffix(h.Kind, "Cluster") {
		parse, ok = parseLBCheck, true
	}
	if !ok {
		if h.Kind == "" && h.APIVersion == "" && isJWKS(doc) {
			return s.addJWKS(obj, doc)
		}
		if h.Kind == "" {
			return errors.New("no kind")
		}
		s.Ignored = append(s.Ignored, obj)
		return nil
	}
	if err := parse(s, obj, h, doc); err != nil {
		return fmt.Errorf("%s %s: %w", h.Kind, h.Metadata.Name, err)
	}
	return nil
}

// addList adds the items of a List, or of any *List kind (what `kubectl get ... -o yaml`
// writes), as documents of their own. A List inside a List is refused: kubectl never writes one.
// Its items are located at the List's own line: JSON items carry no line of their own.
func (s *Set) addList(file string, line int64, doc []byte) error {
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(doc, &l); err != nil {
		return fmt.Errorf("malformed List: %w", err)
	}
	for i, item := range l.Items {
		var h header
		if err := yaml.Unmarshal(item, &h); err != nil {
			return fmt.Errorf("item %d of the List: malformed: %w", i+1, err)
		}
		if strings.HasSuffix(h.Kind, "List") {
			return fmt.Errorf("item %d of the List: a %s inside a List", i+1, h.Kind)
		}
		if err := s.addDocAt(file, line, item); err != nil {
			return fmt.Errorf("item %d of the List: %w", i+1, err)
		}
	}
	return nil
}

type kindKey struct{ group, kind string }

type parseFunc func(s *Set, obj Object, h header, doc []byte) error

var parsers = map[kindKey]parseFunc{
	{"cluster.x-k8s.io", "Cluster"}:                            parseCluster,
	{"cluster.x-k8s.io", "Machine"}:                            parseMachine,
	{"controlplane.cluster.x-k8s.io", "KubeadmControlPlane"}:   parseKCP,
	{"bootstrap.cluster.x-k8s.io", "KubeadmConfig"}:            parseKubeadmConfig,
	{"bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate"}:    parseKubeadmConfigTemplate,
	{"clusterctl.cluster.x-k8s.io", "Provider"}:                parseProvider,
	{"runtime.cluster.x-k8s.io", "ExtensionConfig"}:            parseExtensionConfig,
	{"apps", "Deployment"}:                                     parseDeployment,
	{"v1", "Secret"}:                                           parseSecret,
	{"v1", "Pod"}:                                              parseStaticPod,
	{"kubeadm.k8s.io", "ClusterConfiguration"}:                 parseKubeadm,
	{"kubeadm.k8s.io", "InitConfiguration"}:                    parseKubeadm,
	{"kubeadm.k8s.io", "JoinConfiguration"}:                    parseKubeadm,
	{"kops.k8s.io", "Cluster"}:                                 parseKops,
	{"kops.k8s.io", "InstanceGroup"}:                           parseKopsGroup,
	{"apiserver.config.k8s.io", "AuthenticationConfiguration"}: parseAuthn,
}

// unmarshal decodes doc into v, naming what failed.
func unmarshal(doc []byte, v any) error {
	if err := yaml.Unmarshal(doc, v); err != nil {
		return fmt.Errorf("malformed: %w", err)
	}
	return nil
}

// Cluster names a Cluster API cluster of s, or "" when s has none. KCPs and Secrets count too.
func (s *Set) ClusterName() string {
	for _, c := range s.Clusters {
		return c.Name
	}
	for _, k := range s.KCPs {
		if n := k.Labels["cluster.x-k8s.io/cluster-name"]; n != "" {
			return n
		}
	}
	for _, k := range s.Kops {
		return k.Name
	}
	return ""
}

// Empty reports whether s has nothing preflight can compare.
func (s *Set) Empty() bool {
	return len(s.KCPs) == 0 && len(s.Kubeadm) == 0 && len(s.StaticPods) == 0 && len(s.Kops) == 0
}

// SortedIgnored lists the ignored documents, each once.
func (s *Set) SortedIgnored() []Object {
	out := slices.Clone(s.Ignored)
	slices.SortFunc(out, func(a, b Object) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}
