package check

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// tokenInfo is what the check needs from a JWT without verifying it. The signature is never kept.
type tokenInfo struct {
	KID       string
	Issuer    string
	Subject   string
	Audiences []string
	Exp       int64
	Legacy    bool // no aud/exp: a secret-based token
}

// decodeToken reads the header and payload of a compact JWS without verifying it.
func decodeToken(raw string) (tokenInfo, error) {
	parts := strings.Split(strings.TrimSpace(raw), ".")
	if len(parts) != 3 {
		return tokenInfo{}, errors.New("not a JWT (want three dot-separated parts)")
	}
	var hdr struct {
		KID string `json:"kid"`
	}
	if err := decodeSegment(parts[0], &hdr); err != nil {
		return tokenInfo{}, fmt.Errorf("JWT header: %w", err)
	}
	var claims struct {
		Iss string          `json:"iss"`
		Sub string          `json:"sub"`
		Aud json.RawMessage `json:"aud"`
		Exp *float64        `json:"exp"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return tokenInfo{}, fmt.Errorf("JWT payload: %w", err)
	}
	ti := tokenInfo{KID: hdr.KID, Issuer: claims.Iss, Subject: claims.Sub}
	if len(claims.Aud) > 0 {
		var one string
		if json.Unmarshal(claims.Aud, &one) == nil {
			ti.Audiences = []string{one}
		} else if err := json.Unmarshal(claims.Aud, &ti.Audiences); err != nil {
			return tokenInfo{}, fmt.Errorf("JWT aud: %w", err)
		}
	}
	if claims.Exp != nil {
		ti.Exp = int64(*claims.Exp)
	}
	ti.Legacy = len(ti.Audiences) == 0 && claims.Exp == nil
	return ti, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return fmt.Errorf("base64: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	return nil
}

// summary describes a token for people: issuer, subject, key ID and audiences, never the token.
func (t tokenInfo) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "iss=%s sub=%s kid=%s", t.Issuer, t.Subject, shortKID(t.KID))
	if len(t.Audiences) > 0 {
		fmt.Fprintf(&b, " aud=%s", strings.Join(t.Audiences, ","))
	}
	if t.Legacy {
		b.WriteString(" (legacy, no expiry)")
	}
	return b.String()
}

// shortKID abbreviates a 43-character key ID for tables.
func shortKID(kid string) string {
	if len(kid) > 12 {
		return kid[:12] + "…"
	}
	if kid == "" {
		return "-"
	}
	return kid
}

func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}
