// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command signer is the lab's external JWT signer (KEP-740): it serves the published
// k8s.io/externaljwt v1 API (ExternalJWTSigner: Sign, FetchKeys, Metadata) on a Unix socket, the
// one a kube-apiserver names with --service-account-signing-endpoint.
//
// What it serves comes from a control file (JSON, package credwatch/pkg/lab/signer writes it),
// read again whenever it changes, so a scenario steers a running signer by rewriting the file:
//
//	{"keys": [{"file": "sa.key"}, {"file": "old.pub", "excludeFromOIDCDiscovery": true}],
//	 "signKeyFile": "sa.key", "refreshHintSeconds": 60, "maxTokenExpirationSeconds": 86400,
//	 "dataTimestamp": "2026-01-01T00:00:00Z", "fail": {"fetchKeys": "key store unreachable"}}
//
// keys are what FetchKeys returns, in order (a PEM private or public key each; the key id is
// kube-apiserver's own, the base64url SHA-256 of the PKIX public key). signKeyFile is the private
// key Sign uses (default: the first key with a private half that is not excluded). fail makes an
// RPC answer codes.Unavailable with that message. It never writes a private key anywhere: its log
// names key ids only.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
)

// version is what --version prints (the lab's binary checks compare it with the line).
const version = "credwatch lab external JWT signer, k8s.io/externaljwt v0.36.3 (v1.36.3)"

func main() {
	socket := flag.String("socket", "", "Unix socket to serve on (removed first if it exists)")
	control := flag.String("control", "", "control file (JSON), read again whenever it changes")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	if *socket == "" || *control == "" {
		fmt.Fprintln(os.Stderr, "signer: --socket and --control are required")
		os.Exit(2)
	}
	logger := log.New(os.Stderr, "signer: ", log.LstdFlags|log.Lmicroseconds)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, *socket, newServer(*control, logger), logger); err != nil {
		logger.Fatal(err)
	}
}

// serve listens on socket and serves s until ctx ends.
func serve(ctx context.Context, socket string, s *server, logger *log.Logger) error {
	if err := os.Remove(socket); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove old socket: %w", err)
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return err
	}
	g := grpc.NewServer()
	externaljwtv1.RegisterExternalJWTSignerServer(g, s)
	go func() {
		<-ctx.Done()
		g.Stop()
	}()
	logger.Printf("serving k8s.io/externaljwt v1 on %s (control file %s)", socket, s.file)
	err = g.Serve(ln)
	_ = os.Remove(socket)
	if ctx.Err() != nil {
		logger.Printf("stopped")
		return nil
	}
	return err
}
