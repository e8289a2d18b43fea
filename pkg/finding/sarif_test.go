package finding

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// sarifSchema is the OASIS SARIF 2.1.0 schema (errata 01), kept beside the project in shared/.
const sarifSchema = "../../../shared/reference/schemas/sarif-2.1.0.json"

func compileSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(sarifSchema)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the SARIF schema: %v (the test reads it from shared/reference/schemas beside the clone)", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return s
}

// roundTrip is what a consumer of the log reads: the JSON credwatch prints, decoded.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytesReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestSARIFSchema: the log validates against SARIF 2.1.0 when clean (rules is [], not null), with
// findings on members and objects, and with a finding on neither; the driver version is the one
// given (credwatch's version), "dev" when none is.
func TestSARIFSchema(t *testing.T) {
	schema := compileSARIFSchema(t)
	drift := New("member-key-drift", "apiserver-2 signs with a key apiserver-1 does not know").On("apiserver-2", "")
	secret := New("cloud-credential-rejected", "vCenter rejected the login").On("", "kube-system/vsphere-cloud-secret")
	bare := Finding{ID: "check-skipped", Severity: catalogue.Info, Title: "skipped", Message: "no RBAC"}
	tests := []struct {
		name     string
		version  string
		findings []Finding
	}{
		{"clean", "v0.2.0", nil},
		{"findings", "v0.2.0-3-gabcdef0", []Finding{drift, secret, drift.On("apiserver-3", "")}},
		{"no location, no version", "", []Finding{bare}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := SARIF(Tool{Name: "credwatch check", Version: tt.version}, tt.findings)
			doc := roundTrip(t, log)
			if err := schema.Validate(doc); err != nil {
				t.Fatalf("not valid SARIF 2.1.0: %v", err)
			}
			driver := doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any)
			if rules, ok := driver["rules"].([]any); !ok {
				t.Errorf("rules = %#v, want a list", driver["rules"])
			} else if len(tt.findings) == 0 && len(rules) != 0 {
				t.Errorf("rules = %v on a clean run, want []", rules)
			}
			want := tt.version
			if want == "" {
				want = "dev"
			}
			if driver["version"] != want {
				t.Errorf("driver version %v, want %q", driver["version"], want)
			}
		})
	}
}

// TestSARIFFingerprints: the same finding has the same fingerprint in another run, with another
// message (which carries times and counts); another member or object has another one.
func TestSARIFFingerprints(t *testing.T) {
	a := New("member-key-drift", "seen at 10:00").On("apiserver-2", "")
	again := New("member-key-drift", "seen at 10:05, 3 times").On("apiserver-2", "")
	other := New("member-key-drift", "seen at 10:00").On("apiserver-3", "")
	fp := func(f Finding) map[string]string {
		doc := roundTrip(t, SARIF(Tool{Name: "credwatch check"}, []Finding{f}))
		res := doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any)
		out := map[string]string{}
		for k, v := range res["partialFingerprints"].(map[string]any) {
			out[k] = v.(string)
		}
		return out
	}
	if !reflect.DeepEqual(fp(a), fp(again)) {
		t.Errorf("same finding, other message: fingerprints %v and %v differ", fp(a), fp(again))
	}
	if reflect.DeepEqual(fp(a), fp(other)) {
		t.Errorf("findings on two members share the fingerprint %v", fp(a))
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
