package check_test

import (
	"slices"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/cloud"
)

// TestClusterRoleCoversCloud: deploy/clusterrole.yaml lets check read every Secret and ConfigMap
// pkg/cloud looks for, so a check bound to it skips nothing.
func TestClusterRoleCoversCloud(t *testing.T) {
	role := applyManifest(t, fake.NewClientset())
	granted := map[string][]string{}
	for _, r := range role.Rules {
		if slices.Contains(r.Verbs, "get") && len(r.Resources) == 1 {
			granted[r.Resources[0]] = append(granted[r.Resources[0]], r.ResourceNames...)
		}
	}
	for _, w := range cloud.WellKnown {
		res := map[cloud.SourceKind]string{cloud.SourceSecret: "secrets", cloud.SourceConfigMap: "configmaps"}[w.Kind]
		if !slices.Contains(granted[res], w.Name) {
			t.Errorf("deploy/clusterrole.yaml does not grant get on %s %s", res, w.Name)
		}
	}
}
