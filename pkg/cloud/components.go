// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"path"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/credwatch/credwatch/pkg/cmdline"
)

// Component kinds that consume cloud credentials.
const (
	KubeAPIServer          = "kube-apiserver"
	KubeControllerManager  = "kube-controller-manager"
	CloudControllerManager = "cloud-controller-manager"
	CSIController          = "csi-controller"
	Kubelet                = "kubelet"
)

// Component is one running consumer (a Pod) of cloud credentials, as seen in the cluster.
type Component struct {
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	Node      string    `json:"node,omitempty"`
	Owner     string    `json:"owner,omitempty"` // "static" for a mirror Pod, else kind/name of its controller
	Started   time.Time `json:"started,omitzero"`
	// CloudProvider and CloudConfig are its --cloud-provider and --cloud-config flags.
	CloudProvider string `json:"cloudProvider,omitempty"`
	CloudConfig   string `json:"cloudConfig,omitempty"`
	Restarts      int32  `json:"restarts,omitempty"`
	CrashLooping  bool   `json:"crashLooping,omitempty"`
	LastExit      string `json:"lastExit,omitempty"`

	container string
	pod       *corev1.Pod
	// exitReason and exitMessage are the last termination's, whole: LastExit is cut again once
	// the passwords are known (cutExits), redacted before it is cut.
	exitReason, exitMessage string
}

// lastExit is LastExit: the last termination's reason and message, the message redacted (also
// of secrets) and cut to 200 bytes.
func (c Component) lastExit(secrets ...string) string {
	return strings.TrimSpace(c.exitReason + " " + truncate(c.exitMessage, 200, secrets...))
}

// cutExits sets LastExit of each of cs again, redacting secrets before the cut.
func cutExits(cs []Component, secrets []string) []Component {
	if len(secrets) == 0 {
		return cs
	}
	cs = slices.Clone(cs)
	for i := range cs {
		if cs[i].exitReason != "" || cs[i].exitMessage != "" {
			cs[i].LastExit = cs[i].lastExit(secrets...)
		}
	}
	return cs
}

// Ref is "namespace/pod".
func (c Component) Ref() string { return c.Namespace + "/" + c.Pod }

// RestartCommand is how to restart this consumer so it re-reads its credentials.
func (c Component) RestartCommand() string {
	switch {
	case c.Kind == Kubelet:
		return "systemctl restart kubelet   # on every node that runs it with --cloud-config"
	case c.Owner == "static":
		return "crictl stop $(crictl ps -q --name " + c.container + ")   # on node " + c.Node + " (static Pod: the kubelet starts it again)"
	case strings.HasPrefix(c.Owner, "deployment/"), strings.HasPrefix(c.Owner, "daemonset/"), strings.HasPrefix(c.Owner, "statefulset/"):
		return "kubectl -n " + c.Namespace + " rollout restart " + c.Owner
	}
	return "kubectl -n " + c.Namespace + " delete pod " + c.Pod
}

// classify names the component a container is, from its name, image and command.
func classify(pod *corev1.Pod, ctr corev1.Container) string {
	args := append(append([]string{}, ctr.Command...), ctr.Args...)
	first := ""
	if len(args) > 0 {
		first = path.Base(args[0])
	}
	hay := strings.ToLower(ctr.Name + " " + first + " " + path.Base(ctr.Image) + " " + pod.Name)
	switch {
	case strings.Contains(hay, "cloud-controller-manager"):
		return CloudControllerManager
	case strings.Contains(hay, "kube-controller-manager"):
		return KubeControllerManager
	case strings.Contains(hay, "kube-apiserver"):
		return KubeAPIServer
	case strings.Contains(hay, "csi") && strings.Contains(hay, "controller"):
		return CSIController
	}
	return ""
}

// componentsOf returns the credential-consuming containers of pod.
func componentsOf(pod *corev1.Pod) []Component {
	var out []Component
	for _, ctr := range pod.Spec.Containers {
		kind := classify(pod, ctr)
		if kind == "" {
			continue
		}
		// A scalar flag given twice ends with its last value, as pflag sets it.
		flags := cmdline.Parse(expandArgs(ctr))
		c := Component{Kind: kind, Namespace: pod.Namespace, Pod: pod.Name, Node: pod.Spec.NodeName,
			CloudProvider: flags.Last("cloud-provider"), CloudConfig: flags.Last("cloud-config"),
			container: ctr.Name, pod: pod}
		if _, ok := pod.Annotations["kubernetes.io/config.mirror"]; ok {
			c.Owner = "static"
		} else if len(pod.OwnerReferences) > 0 {
			o := pod.OwnerReferences[0]
			c.Owner = strings.ToLower(o.Kind) + "/" + o.Name
			if o.Kind == "ReplicaSet" {
				if i := strings.LastIndex(o.Name, "-"); i > 0 {
					c.Owner = "deployment/" + o.Name[:i]
				}
			}
		}
		for _, st := range pod.Status.ContainerStatuses {
			if st.Name != ctr.Name {
				continue
			}
			c.Restarts = st.RestartCount
			if st.State.Running != nil {
				c.Started = st.State.Running.StartedAt.Time
			}
			c.CrashLooping = crashLooping(st)
			if t := st.LastTerminationState.Terminated; t != nil {
				c.exitReason, c.exitMessage = t.Reason, strings.TrimSpace(t.Message)
				c.LastExit = c.lastExit()
			}
		}
		out = append(out, c)
	}
	return out
}

// crashLooping reports whether a container is in a crash loop: waiting in CrashLoopBackOff, or
// failed again (exited non-zero, or waiting to start) after a failed run. A container running
// again after a failure is not: it may have recovered.
func crashLooping(st corev1.ContainerStatus) bool {
	if w := st.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
		return true
	}
	last := st.LastTerminationState.Terminated
	failedBefore := st.RestartCount > 0 && last != nil && last.ExitCode != 0
	switch {
	case st.State.Terminated != nil:
		return failedBefore && st.State.Terminated.ExitCode != 0
	case st.State.Waiting != nil:
		return failedBefore
	}
	return false
}

// mountSource says where path, as seen inside container ctr of pod, comes from: a hostPath (kind
// node-file, path on the node), a ConfigMap or Secret key, or nothing known.
func mountSource(pod *corev1.Pod, ctrName, p string) (Source, bool) {
	var ctr *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == ctrName {
			ctr = &pod.Spec.Containers[i]
		}
	}
	if ctr == nil || p == "" {
		return Source{}, false
	}
	best := -1
	for i, m := range ctr.VolumeMounts {
		mp := strings.TrimRight(m.MountPath, "/")
		if (p == mp || strings.HasPrefix(p, mp+"/")) && (best < 0 || len(mp) > len(ctr.VolumeMounts[best].MountPath)) {
			best = i
		}
	}
	if best < 0 {
		return Source{}, false
	}
	m := ctr.VolumeMounts[best]
	rest := strings.TrimPrefix(strings.TrimPrefix(p, strings.TrimRight(m.MountPath, "/")), "/")
	if m.SubPath != "" {
		rest = m.SubPath
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name != m.Name {
			continue
		}
		switch {
		case v.HostPath != nil:
			return Source{Kind: SourceNodeFile, Path: path.Join(v.HostPath.Path, rest)}, true
		case v.ConfigMap != nil:
			return Source{Kind: SourceConfigMap, Namespace: pod.Namespace, Name: v.ConfigMap.Name, Key: keyFor(rest, v.ConfigMap.Items)}, true
		case v.Secret != nil:
			return Source{Kind: SourceSecret, Namespace: pod.Namespace, Name: v.Secret.SecretName, Key: keyFor(rest, v.Secret.Items)}, true
		}
	}
	return Source{}, false
}

func keyFor(file string, items []corev1.KeyToPath) string {
	for _, it := range items {
		if it.Path == file {
			return it.Key
		}
	}
	return file
}

// mounts reports whether pod mounts the Secret or ConfigMap src as a volume (or via envFrom).
func mounts(pod *corev1.Pod, src Source) bool {
	for _, v := range pod.Spec.Volumes {
		switch {
		case src.Kind == SourceSecret && v.Secret != nil && v.Secret.SecretName == src.Name:
			return true
		case src.Kind == SourceConfigMap && v.ConfigMap != nil && v.ConfigMap.Name == src.Name:
			return true
		case v.Projected != nil:
			for _, ps := range v.Projected.Sources {
				if src.Kind == SourceSecret && ps.Secret != nil && ps.Secret.Name == src.Name ||
					src.Kind == SourceConfigMap && ps.ConfigMap != nil && ps.ConfigMap.Name == src.Name {
					return true
				}
			}
		}
	}
	return false
}

// expandArgs is the container's command and arguments as the kubelet runs them: $(NAME) replaced
// by the container's env var NAME when it has a literal value (the OpenStack CCM's manifest passes
// --cloud-config=$(CLOUD_CONFIG)), $$ by $, anything else left as written.
func expandArgs(ctr corev1.Container) []string {
	env := map[string]string{}
	for _, e := range ctr.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	args := append(append([]string{}, ctr.Command...), ctr.Args...)
	for i, a := range args {
		args[i] = expand(a, env)
	}
	return args
}

func expand(s string, env map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if j := strings.IndexByte(s[i+2:], ')'); j >= 0 {
				if v, ok := env[s[i+2:i+2+j]]; ok {
					b.WriteString(v)
					i += j + 2
					continue
				}
			}
		}
		b.WriteByte('$')
	}
	return b.String()
}
