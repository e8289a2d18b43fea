// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
)

// syncBuf is the signer's log, read by the test while the server writes it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeControl(t *testing.T, file string, c control) {
	t.Helper()
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// TestSignerOverSocket runs the signer on a Unix socket and talks to it through the published
// client, as kube-apiserver does: the keys, the signature, the control file read again, failures.
func TestSignerOverSocket(t *testing.T) {
	dir := t.TempDir()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaFile, ecFile := filepath.Join(dir, "a.key"), filepath.Join(dir, "b.key")
	writePEM(t, rsaFile, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey))
	ecDER, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, ecFile, "EC PRIVATE KEY", ecDER)
	ctl := filepath.Join(dir, "control.json")
	writeControl(t, ctl, control{Keys: []controlKey{{File: rsaFile}}, RefreshHintSeconds: 7, MaxTokenExpirationSeconds: 3600})

	var logs syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	sock := filepath.Join(dir, "s.sock")
	done := make(chan error, 1)
	go func() { done <- serve(ctx, sock, newServer(ctl, log.New(&logs, "", 0)), log.New(&logs, "", 0)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := externaljwtv1.NewExternalJWTSignerClient(conn)
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()

	md, err := c.Metadata(cctx, &externaljwtv1.MetadataRequest{})
	if err != nil || md.MaxTokenExpirationSeconds != 3600 {
		t.Fatalf("Metadata = %v, %v; want 3600", md, err)
	}
	keys, err := c.FetchKeys(cctx, &externaljwtv1.FetchKeysRequest{})
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	sum := sha256.Sum256(rsaDER)
	wantKID := base64.RawURLEncoding.EncodeToString(sum[:])
	if len(keys.Keys) != 1 || keys.Keys[0].KeyId != wantKID || !bytes.Equal(keys.Keys[0].Key, rsaDER) || keys.RefreshHintSeconds != 7 {
		t.Fatalf("FetchKeys = %v, want one key %s with hint 7", keys, wantKID)
	}
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"https://lab","sub":"x"}`))
	verify(t, c, cctx, claims, wantKID, "RS256", &rsaKey.PublicKey)

	// A new key set: the EC key signs, the RSA key stays for verification only.
	writeControl(t, ctl, control{Keys: []controlKey{{File: ecFile}, {File: rsaFile, ExcludeFromOIDCDiscovery: true}},
		RefreshHintSeconds: 7, MaxTokenExpirationSeconds: 3600})
	ecPub, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	sum = sha256.Sum256(ecPub)
	ecKID := base64.RawURLEncoding.EncodeToString(sum[:])
	keys, err = c.FetchKeys(cctx, &externaljwtv1.FetchKeysRequest{})
	if err != nil || len(keys.Keys) != 2 || keys.Keys[0].KeyId != ecKID || !keys.Keys[1].ExcludeFromOidcDiscovery {
		t.Fatalf("FetchKeys after the change = %v, %v; want %s then the excluded RSA key", keys, err, ecKID)
	}
	verify(t, c, cctx, claims, ecKID, "ES256", &ecKey.PublicKey)

	// FetchKeys fails as told; Sign goes on.
	writeControl(t, ctl, control{Keys: []controlKey{{File: ecFile}}, RefreshHintSeconds: 7, MaxTokenExpirationSeconds: 3600,
		Fail: failures{FetchKeys: "key store unreachable"}})
	_, err = c.FetchKeys(cctx, &externaljwtv1.FetchKeysRequest{})
	if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != "key store unreachable" {
		t.Fatalf("FetchKeys while failing = %v, want Unavailable \"key store unreachable\"", err)
	}
	verify(t, c, cctx, claims, ecKID, "ES256", &ecKey.PublicKey)

	// A broken control file keeps the previous one.
	if err := os.WriteFile(ctl, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	verify(t, c, cctx, claims, ecKID, "ES256", &ecKey.PublicKey)

	out := logs.String()
	for _, want := range []string{"control: keys [" + wantKID + "]", "FetchKeys: failing as told: key store unreachable", "keeping the previous one"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	// The log names key ids only, never key material.
	for _, f := range []string{rsaFile, ecFile} {
		data, _ := os.ReadFile(f)
		blk, _ := pem.Decode(data)
		if strings.Contains(out, base64.StdEncoding.EncodeToString(blk.Bytes)[:40]) || strings.Contains(out, "PRIVATE KEY") {
			t.Errorf("log shows key material of %s", f)
		}
	}
}

func verify(t *testing.T, c externaljwtv1.ExternalJWTSignerClient, ctx context.Context, claims, kid, alg string, pub crypto.PublicKey) {
	t.Helper()
	resp, err := c.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := base64.RawURLEncoding.DecodeString(resp.Header)
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]string
	if err := json.Unmarshal(hdr, &h); err != nil || len(h) != 3 || h["kid"] != kid || h["alg"] != alg || h["typ"] != "JWT" {
		t.Fatalf("header %s, want alg %s, kid %s, typ JWT only", hdr, alg, kid)
	}
	sig, err := base64.RawURLEncoding.DecodeString(resp.Signature)
	if err != nil {
		t.Fatal(err)
	}
	input := []byte(resp.Header + "." + claims)
	switch k := pub.(type) {
	case *rsa.PublicKey:
		sum := sha256.Sum256(input)
		if err := rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig); err != nil {
			t.Fatalf("RS256 signature: %v", err)
		}
	case *ecdsa.PublicKey:
		sum := sha256.Sum256(input)
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if len(sig) != 64 || !ecdsa.Verify(k, sum[:], r, s) {
			t.Fatalf("ES256 signature (%d bytes) does not verify", len(sig))
		}
	}
}

// TestSocketAlreadyThere: a socket left by a killed signer is replaced.
func TestSocketAlreadyThere(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, sock, newServer(filepath.Join(dir, "none.json"), log.New(&syncBuf{}, "", 0)), log.New(&syncBuf{}, "", 0))
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("signer does not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
