// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
)

// Phases of a supervised lab.
const (
	PhaseStarting = "starting"
	PhaseReady    = "ready"
	PhaseFailed   = "failed"
	PhaseStopping = "stopping"
	PhaseDown     = "down"
)

// Service is something the supervisor hosts next to the lab (for example tenants). Start runs
// until ctx is cancelled (lab down) and returns nil then.
type Service interface {
	Start(ctx context.Context) error
}

// ServiceFactory builds a service for a running lab from the JSON config a client posted to
// /v1/services/{name}. The handler (may be nil) serves /v1/services/{name}/... for that service.
type ServiceFactory func(l *lab.Lab, config json.RawMessage) (Service, http.Handler, error)

// SocketPath is the supervisor's unix socket in dir.
func SocketPath(dir string) string { return filepath.Join(dir, "lab.sock") }

// Server supervises one lab.
type Server struct {
	Options  lab.Options
	Services map[string]ServiceFactory
	// Log receives progress lines (besides the in-memory buffer clients read); nil = discard.
	Log io.Writer

	mu       sync.Mutex
	phase    string
	err      string
	lines    []string
	lab      *lab.Lab
	services map[string]*hosted
	done     chan struct{}
	doneOnce sync.Once
	upDone   chan struct{}
	cancelUp context.CancelFunc
}

type hosted struct {
	handler http.Handler
	cancel  context.CancelFunc
	err     error
	exited  chan struct{}
}

// State is what GET /v1/status returns.
type State struct {
	Phase    string            `json:"phase"`
	Error    string            `json:"error,omitempty"`
	PID      int               `json:"pid"`
	Log      []string          `json:"log"`
	Lab      *lab.Status       `json:"lab,omitempty"`
	Services map[string]string `json:"services,omitempty"` // name -> "running" | error
}

// Run starts the lab and serves the socket until the lab is brought down (POST /v1/down), ctx is
// cancelled, or start-up failed and a client has read the failure (or 60 s passed).
func (s *Server) Run(ctx context.Context) error {
	s.phase = PhaseStarting
	s.done = make(chan struct{})
	s.services = map[string]*hosted{}
	s.upDone = make(chan struct{})
	if s.Log == nil {
		s.Log = io.Discard
	}
	if err := os.MkdirAll(s.Options.Dir, 0o755); err != nil {
		return fmt.Errorf("create lab directory: %w", err)
	}
	sock := SocketPath(s.Options.Dir)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", sock, err)
	}
	defer os.Remove(sock)
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	o := s.Options
	o.Log = lineWriter{s}
	upCtx, cancelUp := context.WithCancel(ctx)
	defer cancelUp()
	s.mu.Lock()
	s.cancelUp = cancelUp
	s.mu.Unlock()
	l, err := lab.Up(upCtx, o)
	close(s.upDone)
	s.mu.Lock()
	if err != nil {
		s.phase, s.err = PhaseFailed, err.Error()
		s.mu.Unlock()
		s.logf("lab up failed: %v", err)
		select {
		case <-s.done:
		case <-ctx.Done():
		case <-time.After(60 * time.Second):
		}
		return err
	}
	s.lab, s.phase = l, PhaseReady
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		s.down()
	}
	return nil
}

// down stops services and the lab once.
func (s *Server) down() {
	s.mu.Lock()
	l := s.lab
	if s.phase == PhaseDown || s.phase == PhaseStopping {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.phase = PhaseStopping
	svcs := s.services
	s.mu.Unlock()
	for _, h := range svcs {
		h.cancel()
		<-h.exited
	}
	if l != nil {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if err := l.Down(dctx); err != nil {
			s.logf("lab down: %v", err)
		}
		cancel()
	}
	s.mu.Lock()
	s.phase = PhaseDown
	s.mu.Unlock()
	s.doneOnce.Do(func() { close(s.done) })
}

func (s *Server) logf(format string, args ...any) {
	_, _ = lineWriter{s}.Write([]byte(fmt.Sprintf(format, args...) + "\n"))
}

type lineWriter struct{ s *Server }

func (w lineWriter) Write(p []byte) (int, error) {
	ts := time.Now().UTC().Format("15:04:05")
	w.s.mu.Lock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.s.lines = append(w.s.lines, line)
		fmt.Fprintf(w.s.Log, "%s %s\n", ts, line)
	}
	if n := len(w.s.lines); n > 2000 {
		w.s.lines = append([]string(nil), w.s.lines[n-1000:]...)
	}
	w.s.mu.Unlock()
	return len(p), nil
}

func (s *Server) state(ctx context.Context, probe bool) State {
	s.mu.Lock()
	st := State{Phase: s.phase, Error: s.err, PID: os.Getpid(), Log: append([]string(nil), s.lines...), Services: map[string]string{}}
	l := s.lab
	for name, h := range s.services {
		select {
		case <-h.exited:
			st.Services[name] = fmt.Sprintf("exited: %v", h.err)
		default:
			st.Services[name] = "running"
		}
	}
	s.mu.Unlock()
	if l != nil {
		ls := l.Status(ctx, probe)
		st.Lab = &ls
	}
	return st
}

// readyLab returns the lab if it is up, else writes a 409.
func (s *Server) readyLab(w http.ResponseWriter) *lab.Lab {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != PhaseReady || s.lab == nil {
		writeError(w, http.StatusConflict, fmt.Errorf("the lab is %s", s.phase))
		return nil
	}
	return s.lab
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		probe, _ := strconv.ParseBool(r.URL.Query().Get("probe"))
		st := s.state(r.Context(), probe)
		if st.Phase == PhaseFailed {
			s.doneOnce.Do(func() { close(s.done) })
		}
		writeJSON(w, http.StatusOK, st)
	})
	mux.HandleFunc("POST /v1/down", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		notUp := s.phase == PhaseFailed || s.phase == PhaseStarting
		cancelUp := s.cancelUp
		s.mu.Unlock()
		if notUp {
			// Up still running or failed: cancelling it makes Up stop what it started.
			if cancelUp != nil {
				cancelUp()
			}
			<-s.upDone
			s.mu.Lock()
			notUp = s.phase == PhaseFailed
			s.mu.Unlock()
		}
		if notUp {
			s.doneOnce.Do(func() { close(s.done) })
		} else {
			s.down()
		}
		writeJSON(w, http.StatusOK, s.state(r.Context(), false))
	})
	mux.HandleFunc("POST /v1/members", func(w http.ResponseWriter, r *http.Request) {
		l := s.readyLab(w)
		var o lab.MemberOptions
		if l == nil || !readJSON(w, r, &o) {
			return
		}
		m, err := l.AddMember(r.Context(), o)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	})
	mux.HandleFunc("DELETE /v1/members/{name}", func(w http.ResponseWriter, r *http.Request) {
		l := s.readyLab(w)
		if l == nil {
			return
		}
		name := r.PathValue("name")
		if _, ok := l.Member(name); !ok {
			writeError(w, http.StatusNotFound, fmt.Errorf("no lab member %q", name))
			return
		}
		q := r.URL.Query()
		o := lab.RemoveOptions{EtcdFirst: q.Get("etcdFirst") == "true", KeepAPIServer: q.Get("keepAPIServer") == "true"}
		if err := l.RemoveMember(r.Context(), name, o); err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"removed": name})
	})
	mux.HandleFunc("POST /v1/roll", func(w http.ResponseWriter, r *http.Request) {
		l := s.readyLab(w)
		var o lab.MemberOptions
		if l == nil || !readJSON(w, r, &o) {
			return
		}
		var steps []RollStep
		err := l.Roll(r.Context(), o, func(added, removed lab.Member) {
			steps = append(steps, RollStep{Added: added.Name, Removed: removed.Name})
		})
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, steps)
	})
	mux.HandleFunc("POST /v1/members/{name}/partition", func(w http.ResponseWriter, r *http.Request) {
		l := s.readyLab(w)
		var body struct {
			From lab.PartitionFrom `json:"from"`
		}
		if l == nil || !readJSON(w, r, &body) {
			return
		}
		if err := lab.ValidatePartitionFrom(body.From); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		if err := l.Partition(r.Context(), r.PathValue("name"), body.From); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("POST /v1/members/{name}/heal", func(w http.ResponseWriter, r *http.Request) {
		l := s.readyLab(w)
		if l == nil {
			return
		}
		if err := l.Heal(r.Context(), r.PathValue("name")); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"healed": r.PathValue("name")})
	})
	mux.HandleFunc("PUT /v1/lbmode", func(w http.ResponseWriter, r *http.Request) {
		l := s.readyLab(w)
		var body struct {
			Mode lab.LBMode `json:"mode"`
		}
		if l == nil || !readJSON(w, r, &body) {
			return
		}
		if err := lab.ValidateLBMode(body.Mode); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		l.SetLBMode(body.Mode)
		writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("POST /v1/controller-manager/{action}", func(w http.ResponseWriter, r *http.Request) {
		l := s.readyLab(w)
		if l == nil {
			return
		}
		var err error
		switch r.PathValue("action") {
		case "start":
			err = l.StartControllerManager(r.Context())
		case "stop":
			err = l.StopControllerManager(r.Context())
		default:
			writeError(w, http.StatusNotFound, fmt.Errorf("unknown action %q (start, stop)", r.PathValue("action")))
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]bool{"running": l.ControllerManagerRunning()})
	})
	mux.HandleFunc("POST /v1/services/{name}", s.startService)
	mux.HandleFunc("/v1/services/{name}/", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		s.mu.Lock()
		h := s.services[name]
		s.mu.Unlock()
		if h == nil || h.handler == nil {
			writeError(w, http.StatusNotFound, fmt.Errorf("service %q is not running", name))
			return
		}
		http.StripPrefix("/v1/services/"+name, h.handler).ServeHTTP(w, r)
	})
	return mux
}

func (s *Server) startService(w http.ResponseWriter, r *http.Request) {
	l := s.readyLab(w)
	if l == nil {
		return
	}
	name := r.PathValue("name")
	f, ok := s.Services[name]
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("unknown service %q", name))
		return
	}
	cfg, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.mu.Lock()
	if old := s.services[name]; old != nil {
		select {
		case <-old.exited:
		default:
			s.mu.Unlock()
			writeError(w, http.StatusConflict, fmt.Errorf("service %q is already running", name))
			return
		}
	}
	s.mu.Unlock()
	svc, handler, err := f(l, json.RawMessage(cfg))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("service %s: %w", name, err))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &hosted{handler: handler, cancel: cancel, exited: make(chan struct{})}
	go func() {
		err := svc.Start(ctx)
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		h.err = err
		close(h.exited)
		if err != nil {
			s.logf("service %s: %v", name, err)
		}
	}()
	s.mu.Lock()
	s.services[name] = h
	s.mu.Unlock()
	s.logf("service %s started", name)
	writeJSON(w, http.StatusOK, map[string]string{"started": name})
}

// RollStep is one replacement of a roll.
type RollStep struct {
	Added   string `json:"added"`
	Removed string `json:"removed"`
}

type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, apiError{Error: err.Error()})
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("request body: %w", err))
		return false
	}
	return true
}
