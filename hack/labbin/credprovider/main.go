// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command lab-credential-provider is the lab's kubelet image credential provider (KEP-4412): the
// kubelet runs it for images its CredentialProviderConfig matches and hands it, on stdin, a
// CredentialProviderRequest with a service-account token it requested for the pod (an audience
// the config names). It writes one line per request to --log: the image, the pod's service
// account and the token's claims that say who minted it for what (kid, iss, aud, sub, jti, exp),
// never the token itself nor its signature; and answers registry credentials that are not the
// token (the kubelet refuses a token as password unless the cache type is Token).
package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// version is what --version prints (the lab's binary checks compare it with the line).
const version = "credwatch lab image credential provider, k8s.io/kubelet v0.36.3 (v1.36.3)"

func main() {
	logFile := flag.String("log", "", "append one JSON line per request to this file")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	if err := run(os.Stdin, os.Stdout, *logFile, time.Now); err != nil {
		fmt.Fprintln(os.Stderr, "lab-credential-provider:", err)
		os.Exit(1)
	}
}

// record is one logged request.
type record struct {
	Time           time.Time `json:"time"`
	Image          string    `json:"image"`
	Token          bool      `json:"token"`
	Kid            string    `json:"kid,omitempty"`
	Issuer         string    `json:"iss,omitempty"`
	Audience       any       `json:"aud,omitempty"`
	Subject        string    `json:"sub,omitempty"`
	JTI            string    `json:"jti,omitempty"`
	Expires        int64     `json:"exp,omitempty"`
	Annotations    int       `json:"annotations,omitempty"`
	DecodeProblems string    `json:"decodeProblems,omitempty"`
}

func run(in io.Reader, out io.Writer, logFile string, now func() time.Time) error {
	var req credv1.CredentialProviderRequest
	if err := json.NewDecoder(io.LimitReader(in, 1<<20)).Decode(&req); err != nil {
		return fmt.Errorf("read the CredentialProviderRequest on stdin: %w", err)
	}
	rec := record{Time: now().UTC(), Image: req.Image, Token: req.ServiceAccountToken != "", Annotations: len(req.ServiceAccountAnnotations)}
	if rec.Token {
		if err := claims(req.ServiceAccountToken, &rec); err != nil {
			rec.DecodeProblems = err.Error()
		}
	}
	if logFile != "" {
		if err := appendLine(logFile, rec); err != nil {
			return err
		}
	}
	host := req.Image
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	resp := credv1.CredentialProviderResponse{
		TypeMeta:      metav1.TypeMeta{APIVersion: "credentialprovider.kubelet.k8s.io/v1", Kind: "CredentialProviderResponse"},
		CacheKeyType:  credv1.ImagePluginCacheKeyType,
		CacheDuration: &metav1.Duration{Duration: time.Second},
		Auth:          map[string]credv1.AuthConfig{host: {Username: "lab", Password: "lab-registry-password"}},
	}
	return json.NewEncoder(out).Encode(resp)
}

// claims fills rec from the token's header and payload, read without verifying.
func claims(tok string, rec *record) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a compact JWS (%d parts)", len(parts))
	}
	var hdr struct {
		Kid string `json:"kid"`
	}
	if err := decodePart(parts[0], &hdr); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	var c struct {
		Iss string `json:"iss"`
		Aud any    `json:"aud"`
		Sub string `json:"sub"`
		JTI string `json:"jti"`
		Exp int64  `json:"exp"`
	}
	if err := decodePart(parts[1], &c); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	rec.Kid, rec.Issuer, rec.Audience, rec.Subject, rec.JTI, rec.Expires = hdr.Kid, c.Iss, c.Aud, c.Sub, c.JTI, c.Exp
	return nil
}

func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func appendLine(file string, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("log: %w", err)
	}
	return f.Close()
}
