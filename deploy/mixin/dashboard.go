// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin

import (
	"encoding/json"
	"fmt"
)

// The Grafana dashboard model, as much of it as the dashboard uses (schemaVersion 39).
type (
	dashboard struct {
		UID           string     `json:"uid"`
		Title         string     `json:"title"`
		Description   string     `json:"description"`
		Tags          []string   `json:"tags"`
		Editable      bool       `json:"editable"`
		SchemaVersion int        `json:"schemaVersion"`
		Time          timeRange  `json:"time"`
		Refresh       string     `json:"refresh"`
		Templating    templating `json:"templating"`
		Panels        []panel    `json:"panels"`
	}
	timeRange  struct{ From, To string }
	templating struct {
		List []variable `json:"list"`
	}
	variable struct {
		Name       string          `json:"name"`
		Label      string          `json:"label"`
		Type       string          `json:"type"`
		Query      any             `json:"query"`
		Datasource *datasource     `json:"datasource,omitempty"`
		Refresh    int             `json:"refresh,omitempty"`
		IncludeAll bool            `json:"includeAll,omitempty"`
		Multi      bool            `json:"multi,omitempty"`
		Hide       int             `json:"hide,omitempty"`
		Current    json.RawMessage `json:"current,omitempty"`
	}
	datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	panel struct {
		ID          int         `json:"id"`
		Type        string      `json:"type"`
		Title       string      `json:"title"`
		Description string      `json:"description"`
		Datasource  datasource  `json:"datasource"`
		GridPos     gridPos     `json:"gridPos"`
		FieldConfig fieldConfig `json:"fieldConfig"`
		Targets     []target    `json:"targets"`
	}
	gridPos     struct{ H, W, X, Y int }
	fieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	}
	target struct {
		RefID        string     `json:"refId"`
		Expr         string     `json:"expr"`
		LegendFormat string     `json:"legendFormat"`
		Datasource   datasource `json:"datasource"`
	}
)

func (t timeRange) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"from": t.From, "to": t.To})
}

func (g gridPos) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]int{"h": g.H, "w": g.W, "x": g.X, "y": g.Y})
}

// DashboardJSON is the Grafana dashboard credwatch-credentials: per member, the series the alerts
// read, through the recording rules where there are some.
func DashboardJSON(c Config) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ds := datasource{Type: "prometheus", UID: "${datasource}"}
	flt := fmt.Sprintf(`%s=~"$cluster", instance=~"$instance"`, c.ClusterLabel)
	sel := fmt.Sprintf("%s, %s", c.APIServerSelector, flt)
	panels := []struct{ title, desc, unit, legend, expr string }{
		{"Authentication failure ratio", "Share of each member's authentication attempts that failed (authentication_attempts{result!=\"success\"}).",
			"percentunit", "{{instance}}", fmt.Sprintf("%s{%s}", RecFailureRatio, flt)},
		{"Failure ratio above the other members", "A member's failure ratio minus that of the others together: one member high alone is the roll signature.",
			"percentunit", "{{instance}}", fmt.Sprintf("%s{%s} - %s{%s}", RecFailureRatio, flt, RecOthersFailureRatio, flt)},
		{"Authentication attempts by result", "authentication_attempts per second, by member and result.",
			"reqps", "{{instance}} {{result}}", fmt.Sprintf("sum by (instance, result) (rate(authentication_attempts{%s}[5m]))", sel)},
		{"Token cache fetch errors", "Share of token cache fetches that failed.",
			"percentunit", "{{instance}}", fmt.Sprintf("%s{%s}", RecTokenCacheErrors, flt)},
		{"Stale and legacy service-account tokens", "Stale projected tokens and legacy Secret-based tokens used per second.",
			// rate() drops the metric's name, so a kind label tells the two apart in the legend.
			"reqps", "{{instance}} {{kind}}", fmt.Sprintf("label_replace(rate(serviceaccount_stale_tokens_total{%[1]s}[5m]), \"kind\", \"stale\", \"\", \"\")\nor\nlabel_replace(rate(serviceaccount_legacy_tokens_total{%[1]s}[5m]), \"kind\", \"legacy\", \"\", \"\")", sel)},
		{"External signer: age of the last key fetch", "time() - apiserver_externaljwt_fetch_keys_success_timestamp.",
			"s", "{{instance}}", fmt.Sprintf("time() - apiserver_externaljwt_fetch_keys_success_timestamp{%s}", sel)},
		{"External signer errors", "Share of key fetches and signing requests to the external signer that failed.",
			"percentunit", "{{instance}} {{__name__}}", fmt.Sprintf("%s{%s} or %s{%s}", RecSignerFetchErrors, flt, RecSignerSignErrors, flt)},
		{"Authentication configuration reloads", "Automatic reloads of --authentication-config, by member and status.",
			"short", "{{instance}} {{status}}", fmt.Sprintf("sum by (instance, status) (increase(apiserver_authentication_config_controller_automatic_reloads_total{%s}[15m]))", sel)},
		{"Authentication configuration per member", "1 per member and configuration hash: more than one hash is drift.",
			"short", "{{instance}} {{hash}}", fmt.Sprintf("apiserver_authentication_config_controller_last_config_info{%s}", sel)},
		{"JWT issuer key sets per member", "1 per member, issuer and key-set hash: more than one hash for an issuer is drift.",
			"short", "{{instance}} {{jwt_issuer_hash}} {{hash}}", fmt.Sprintf("apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info{%s}", sel)},
		{"Client certificate lifetime left (1st percentile)", "The shortest remaining lifetime of client certificates presented to each member.",
			"s", "{{instance}}", fmt.Sprintf("histogram_quantile(0.01, sum by (instance, le) (rate(apiserver_client_certificate_expiration_seconds_bucket{%s}[5m])))", sel)},
	}
	d := dashboard{
		UID: "credwatch-credentials", Title: "credwatch / Credentials",
		Description:   "kube-apiserver's own authentication series, per member (credwatch credential mixin).",
		Tags:          []string{"credwatch", "kubernetes-mixin"},
		SchemaVersion: 39, Time: timeRange{"now-6h", "now"}, Refresh: "30s",
		Templating: templating{List: []variable{
			{Name: "datasource", Label: "Data source", Type: "datasource", Query: "prometheus",
				Current: json.RawMessage(`{"selected":false,"text":"default","value":"default"}`)},
			{Name: "cluster", Label: "Cluster", Type: "query", Datasource: &ds, Refresh: 2, IncludeAll: true,
				Query: fmt.Sprintf("label_values(authentication_attempts{%s}, %s)", c.APIServerSelector, c.ClusterLabel),
				Hide:  0},
			{Name: "instance", Label: "Member", Type: "query", Datasource: &ds, Refresh: 2, IncludeAll: true, Multi: true,
				Query: fmt.Sprintf("label_values(authentication_attempts{%s}, instance)", c.APIServerSelector)},
		}},
	}
	for i, p := range panels {
		pn := panel{ID: i + 1, Type: "timeseries", Title: p.title, Description: p.desc, Datasource: ds,
			GridPos: gridPos{H: 8, W: 12, X: 12 * (i % 2), Y: 8 * (i / 2)},
			Targets: []target{{RefID: "A", Expr: p.expr, LegendFormat: p.legend, Datasource: ds}}}
		pn.FieldConfig.Defaults.Unit = p.unit
		d.Panels = append(d.Panels, pn)
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("mixin: dashboard: %w", err)
	}
	return append(out, '\n'), nil
}
