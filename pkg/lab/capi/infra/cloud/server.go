// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
)

// maxBody bounds a request's body: a bootstrap cloud-config is tens of kilobytes.
const maxBody = 4 << 20

// Handler serves c's API to callers with token (see the package's documentation); log receives
// a line per failed call (nil: discarded). A host's creation and deletion go on when the
// caller goes away, as a cloud's do: a retry of the same host waits for them (LocalCloud makes
// one host of a name at a time).
func Handler(c controller.Cloud, token string, log io.Writer) http.Handler {
	if log == nil {
		log = io.Discard
	}
	h := &handler{c: c, token: []byte(token), log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/hosts/{host}", h.createHost)
	mux.HandleFunc("GET /v1/hosts/{host}", h.host)
	mux.HandleFunc("DELETE /v1/hosts/{host}", h.deleteHost)
	mux.HandleFunc("PUT /v1/balancers/{namespace}/{name}", h.ensureBalancer)
	mux.HandleFunc("DELETE /v1/balancers/{namespace}/{name}", h.deleteBalancer)
	mux.HandleFunc("PUT /v1/balancers/{namespace}/{name}/members/{host}", h.register)
	mux.HandleFunc("DELETE /v1/members/{host}", h.deregister)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, errors.New("no such call"))
	})
	return h.auth(mux)
}

type handler struct {
	c     controller.Cloud
	token []byte
	log   io.Writer
}

// auth answers 401 to a request without the bearer token.
func (h *handler) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), h.token) != 1 {
			h.fail(w, r, http.StatusUnauthorized, errors.New("no valid bearer token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *handler) createHost(w http.ResponseWriter, r *http.Request) {
	var req createHostRequest
	if !h.decode(w, r, &req) {
		return
	}
	info, err := h.c.CreateHost(context.WithoutCancel(r.Context()), r.PathValue("host"), req.Bootstrap, req.Meta)
	h.answer(w, r, info, err)
}

func (h *handler) host(w http.ResponseWriter, r *http.Request) {
	info, err := h.c.Host(r.Context(), r.PathValue("host"))
	h.answer(w, r, info, err)
}

func (h *handler) deleteHost(w http.ResponseWriter, r *http.Request) {
	h.answer(w, r, nil, h.c.DeleteHost(context.WithoutCancel(r.Context()), r.PathValue("host")))
}

func (h *handler) ensureBalancer(w http.ResponseWriter, r *http.Request) {
	var spec infra.LabClusterSpec
	if !h.decode(w, r, &spec) {
		return
	}
	addr, created, err := h.c.EnsureBalancer(r.Context(), r.PathValue("namespace"), r.PathValue("name"), spec)
	h.answer(w, r, ensureBalancerResponse{Addr: addr, Created: created}, err)
}

func (h *handler) deleteBalancer(w http.ResponseWriter, r *http.Request) {
	deleted, err := h.c.DeleteBalancer(r.Context(), r.PathValue("namespace"), r.PathValue("name"))
	h.answer(w, r, deleteBalancerResponse{Deleted: deleted}, err)
}

func (h *handler) register(w http.ResponseWriter, r *http.Request) {
	var req registerRequest
	if !h.decode(w, r, &req) {
		return
	}
	err := h.c.Register(r.Context(), r.PathValue("namespace"), r.PathValue("name"), r.PathValue("host"), req.Addr)
	h.answer(w, r, nil, err)
}

func (h *handler) deregister(w http.ResponseWriter, r *http.Request) {
	h.answer(w, r, nil, h.c.Deregister(r.Context(), r.PathValue("host")))
}

// decode reads r's JSON body into v; on failure it answers 400 and returns false.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		h.fail(w, r, http.StatusBadRequest, fmt.Errorf("request body: %w", err))
		return false
	}
	return true
}

// answer writes v as JSON (nil: 204), or err as a 500.
func (h *handler) answer(w http.ResponseWriter, r *http.Request, v any, err error) {
	switch {
	case err != nil:
		h.fail(w, r, http.StatusInternalServerError, err)
	case v == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

// fail answers status with err as one line, and logs it.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	msg := oneLine(err.Error())
	fmt.Fprintf(h.log, "%s lab cloud: %s %s: %d %s\n", time.Now().Format("15:04:05.000"), r.Method, r.URL.Path, status, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorResponse{Error: msg})
}

// oneLine joins s's lines with "; ".
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	return strings.Join(lines, "; ")
}

// ServerOptions configures a Server.
type ServerOptions struct {
	// Cloud is what the server serves (required).
	Cloud controller.Cloud
	// Token is the bearer token every call must carry (required).
	Token string
	// Address is where the server listens: an IP the callers reach (the lab network's gateway)
	// and a port, 0 for any (required).
	Address string
	// Certificate, when set, makes the server HTTPS.
	Certificate *tls.Certificate
	// Log receives a line per failed call; default discarded.
	Log io.Writer
}

// Server serves a Cloud on a listener.
type Server struct {
	srv *http.Server
	url string
}

// Start listens on o.Address and serves o.Cloud until Close.
func Start(o ServerOptions) (*Server, error) {
	if o.Cloud == nil || o.Token == "" || o.Address == "" {
		return nil, errors.New("lab cloud: a cloud, a token and an address are required")
	}
	ln, err := net.Listen("tcp", o.Address)
	if err != nil {
		return nil, fmt.Errorf("lab cloud: listen: %w", err)
	}
	scheme := "http"
	if o.Certificate != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*o.Certificate}, MinVersion: tls.VersionTLS12})
		scheme = "https"
	}
	s := &Server{srv: &http.Server{Handler: Handler(o.Cloud, o.Token, o.Log), ReadHeaderTimeout: 10 * time.Second},
		url: scheme + "://" + ln.Addr().String()}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is where the server answers (scheme://host:port).
func (s *Server) URL() string { return s.url }

// closeWait bounds Close's wait for the calls in progress.
const closeWait = 5 * time.Second

// Close stops accepting calls and waits for those in progress until ctx ends or closeWait
// passed, then drops them (a host's creation goes on: see Handler).
func (s *Server) Close(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, closeWait)
	defer cancel()
	if s.srv.Shutdown(sctx) == nil {
		return nil
	}
	if err := s.srv.Close(); err != nil {
		return fmt.Errorf("lab cloud: stop the server: %w", err)
	}
	return nil
}
