// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/clusterapi"
)

// CAPIClusterFlags name a Cluster API Cluster on the management cluster the kubeconfig reaches
// (check and preflight): --capi-cluster NAME in the namespace of -n/--namespace, else of the
// kubeconfig context, as `clusterctl describe cluster NAME -n NAMESPACE` does; NAMESPACE/NAME is
// accepted too. --cluster [NAMESPACE/]NAME, the spelling before, stays one release as a
// deprecated alias; when it goes, --cluster is kubectl's kubeconfig cluster here as in watch.
type CAPIClusterFlags struct {
	name, alias string
	kube        *KubeFlags
}

// deprecatedCAPICluster is the deprecation notice of check's and preflight's --cluster.
const deprecatedCAPICluster = "use --capi-cluster NAME -n NAMESPACE (--cluster will be kubectl's kubeconfig cluster)"

// NewCAPIClusterFlags registers --capi-cluster (usage is its help) and the deprecated --cluster
// on fs, whose deprecation notice goes to errOut. kube must offer -n/--namespace and leave out
// kubectl's --cluster (NewNamespacedKubeFlags(..., "cluster")).
func NewCAPIClusterFlags(fs *pflag.FlagSet, errOut io.Writer, kube *KubeFlags, usage string) *CAPIClusterFlags {
	f := &CAPIClusterFlags{kube: kube}
	fs.StringVar(&f.name, "capi-cluster", "", usage)
	fs.StringVar(&f.alias, "cluster", "", "deprecated: --capi-cluster")
	Deprecate(fs, errOut, "cluster", deprecatedCAPICluster)
	return f
}

// NewCAPIClusterFlag registers --capi-cluster alone, for a command whose --cluster has always
// been kubectl's kubeconfig cluster (watch). kube must offer -n/--namespace.
func NewCAPIClusterFlag(fs *pflag.FlagSet, kube *KubeFlags, usage string) *CAPIClusterFlags {
	f := &CAPIClusterFlags{kube: kube}
	fs.StringVar(&f.name, "capi-cluster", "", usage)
	return f
}

// Workload reads the Cluster ref on the management cluster mgmt and returns the workload
// cluster's client configuration from its <cluster>-kubeconfig Secret (inline data only:
// clusterapi.SafeREST), tuned as every credwatch client, and the reader that read it. A Cluster
// that is not there, or a Secret that holds no usable kubeconfig, is a usage error; a management
// cluster that does not answer is exit 3.
func Workload(ctx context.Context, mgmt *rest.Config, ref clusterapi.Ref, kube *KubeFlags) (*rest.Config, *clusterapi.Reader, error) {
	rd, err := clusterapi.NewReader(mgmt)
	if err != nil {
		return nil, nil, err
	}
	if _, err := rd.Cluster(ctx, ref); errors.Is(err, clusterapi.ErrNoCluster) {
		return nil, nil, Usage(fmt.Errorf("--capi-cluster: %w", err))
	} else if err != nil {
		return nil, nil, Unreachable(fmt.Errorf("management cluster %s: %w", mgmt.Host, err))
	}
	wl, err := rd.WorkloadREST(ctx, ref)
	if err != nil {
		return nil, nil, Usage(fmt.Errorf("--capi-cluster: %w", err))
	}
	return kube.Tune(wl), rd, nil
}

// Given says whether a Cluster is named (by --capi-cluster or its alias).
func (f *CAPIClusterFlags) Given() bool { return f.name != "" || f.alias != "" }

// Ref is the Cluster named, nil when none is. A malformed name, a namespace that -n contradicts,
// --capi-cluster and --cluster naming different Clusters, and -n without a Cluster are usage
// errors naming the flags.
func (f *CAPIClusterFlags) Ref() (*clusterapi.Ref, error) {
	ns := f.kube.NamespaceFlag()
	if errs := validation.IsDNS1123Label(ns); ns != "" && len(errs) > 0 {
		return nil, Usagef("-n/--namespace %q: not a namespace name: %s", ns, errs[0])
	}
	switch {
	case f.name == "" && f.alias == "":
		if ns != "" {
			return nil, Usagef("-n/--namespace %s: it is the namespace of --capi-cluster; name the Cluster with --capi-cluster NAME", ns)
		}
		return nil, nil
	case f.alias == "":
		return f.parse("--capi-cluster", f.name, ns)
	case f.name == "":
		return f.parse("--cluster", f.alias, ns)
	}
	ref, err := f.parse("--capi-cluster", f.name, ns)
	if err != nil {
		return nil, err
	}
	old, err := f.parse("--cluster", f.alias, ns)
	if err != nil {
		return nil, err
	}
	if *ref != *old {
		return nil, Conflicting("--capi-cluster "+f.name, "--cluster "+f.alias, "--capi-cluster")
	}
	return ref, nil
}

// parse reads the value of flag: [NAMESPACE/]NAME, the namespace from -n (ns) or the kubeconfig.
func (f *CAPIClusterFlags) parse(flag, v, ns string) (*clusterapi.Ref, error) {
	ref, err := clusterapi.ParseRef(v, f.kube.Namespace)
	if err != nil {
		return nil, Usage(fmt.Errorf("%s %w", flag, err))
	}
	if ns != "" && strings.Contains(v, "/") && ref.Namespace != ns {
		return nil, Usagef("%s %s and -n/--namespace %s name different namespaces: give one", flag, v, ns)
	}
	return &ref, nil
}
