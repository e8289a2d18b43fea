// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/token"
)

// The credentials the Prometheus scenarios hold: tokens bound to a pod, tokens signed with the
// lab's shared key the way a member signs them (stale and legacy ones, which no member would mint
// now), and a client certificate signed by the lab's CA.

func clientset(t testing.TB, l *lab.Lab, member string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(l.MemberRESTConfig(member))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// createPod creates, through member, a pod of the probe service account that no node runs.
func createPod(ctx context.Context, t testing.TB, l *lab.Lab, member, name string) *corev1.Pod {
	t.Helper()
	mintToken(t, l, member) // creates the probe service account when missing
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
		ServiceAccountName: probeSA, AutomountServiceAccountToken: new(bool),
		Containers: []corev1.Container{{Name: "app", Image: "registry.credwatch.lab/none:0"}}}}
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); sleepCtx(ctx, time.Second) {
		var got *corev1.Pod
		// A removed etcd member may have led: requests time out until a new leader is elected.
		if got, err = clientset(t, l, member).CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err == nil {
			return got
		}
	}
	t.Fatalf("create pod %s through %s: %v", name, member, err)
	return nil
}

func deletePod(ctx context.Context, t testing.TB, l *lab.Lab, name string) {
	t.Helper()
	zero := int64(0)
	if err := clientset(t, l, l.Members()[0].Name).CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
}

// mintBoundToken asks member for a token of the probe service account bound to pod.
func mintBoundToken(ctx context.Context, t testing.TB, l *lab.Lab, member string, pod *corev1.Pod) string {
	t.Helper()
	exp := int64(3600)
	tr, err := clientset(t, l, member).CoreV1().ServiceAccounts("default").CreateToken(ctx, probeSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest bound to pod %s through %s: %v", pod.Name, member, err)
	}
	return tr.Status.Token
}

// keepMinting asks member for a token every interval until ctx ends, each request allowed 70 s
// (a member whose signer is down answers late or not at all).
func keepMinting(ctx context.Context, l *lab.Lab, member string, every time.Duration) {
	cs, err := kubernetes.NewForConfig(l.MemberRESTConfig(member))
	if err != nil {
		return
	}
	exp := int64(3600)
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 70*time.Second)
		_, _ = cs.CoreV1().ServiceAccounts("default").CreateToken(rctx, probeSA,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
		cancel()
		sleepCtx(ctx, every)
	}
}

func sharedKey(t testing.TB, l *lab.Lab) keys.Key {
	t.Helper()
	ks, err := keys.LoadPEMFile(context.Background(), l.SharedSAKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if k.Private != nil {
			return k
		}
	}
	t.Fatalf("%s holds no private key", l.SharedSAKeyFile())
	return keys.Key{}
}

func probeSAUID(t testing.TB, l *lab.Lab) string {
	t.Helper()
	sa, err := clientset(t, l, l.Members()[0].Name).CoreV1().ServiceAccounts("default").Get(context.Background(), probeSA, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get service account %s: %v", probeSA, err)
	}
	return string(sa.UID)
}

// staleToken is the token a kubelet got two hours ago for pod (3607 s asked, extended to a year
// by --service-account-extend-token-expiration): valid, but an hour past its warnafter, as held
// by a client that read its projected token once.
func staleToken(t testing.TB, l *lab.Lab, pod *corev1.Pod) string {
	t.Helper()
	tok, err := token.Mint(token.MintOptions{Key: sharedKey(t, l), Issuer: l.Options().Issuers[0],
		IssuedAt: time.Now().Add(-2 * time.Hour), ExpirationSeconds: 3607, Extend: true,
		Namespace: "default", ServiceAccount: token.Ref{Name: probeSA, UID: probeSAUID(t, l)},
		Pod: &token.Ref{Name: pod.Name, UID: string(pod.UID)}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// legacyToken creates a kubernetes.io/service-account-token Secret holding a legacy token of the
// probe service account (what the token controller wrote before 1.24) and returns the token.
func legacyToken(ctx context.Context, t testing.TB, l *lab.Lab, secret string) string {
	t.Helper()
	uid := probeSAUID(t, l)
	tok, err := token.Mint(token.MintOptions{Key: sharedKey(t, l), Legacy: true, LegacySecret: secret,
		Namespace: "default", ServiceAccount: token.Ref{Name: probeSA, UID: uid}})
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: "default", Annotations: map[string]string{
		corev1.ServiceAccountNameKey: probeSA, corev1.ServiceAccountUIDKey: uid}},
		Type: corev1.SecretTypeServiceAccountToken, Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tok)}}
	if _, err := clientset(t, l, l.Members()[0].Name).CoreV1().Secrets("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Secret %s: %v", secret, err)
	}
	return tok
}

// presentCertificate signs a client certificate valid for life with the lab's CA and presents
// it to every member each second until ctx ends, in a goroutine of cl's.
func presentCertificate(ctx context.Context, t testing.TB, l *lab.Lab, cl *clients, life time.Duration) {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(filepath.Join(l.Dir(), "pki", "ca.crt"), filepath.Join(l.Dir(), "pki", "ca.key"))
	if err != nil {
		t.Fatalf("the lab's CA: %v", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject: pkix.Name{CommonName: "mixin-aging-client"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(life),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: l.TLSConfig().RootCAs, MinVersion: tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}}
	cl.goUntil(func() {
		for ctx.Err() == nil {
			for _, m := range l.Members() {
				if req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/api", nil); err == nil {
					if resp, err := hc.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}
			sleepCtx(ctx, time.Second)
		}
	})
}
