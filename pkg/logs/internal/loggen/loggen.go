// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package loggen writes synthetic kube-apiserver logs for benchmarks: ordinary request and
// controller lines with a share of authentication failures, in mixed formats (klog text of
// every era, klog JSON, CRI, Docker json-file, kubectl prefixes).
package loggen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// Options shape the generated log.
type Options struct {
	Bytes     int64   // stop after about this many bytes
	AuthShare float64 // share of lines that are authentication failures (0.05)
	Seed      uint64
	Start     time.Time
}

var (
	hosts  = []string{"ip-10-0-212-164", "ip-10-0-78-60", "ip-10-0-252-80"}
	errors = []string{
		"[invalid bearer token, service account token has been invalidated]",
		"[invalid bearer token, square/go-jose: error in cryptographic primitive]",
		"[invalid bearer token, invalid signature, no keys found]",
		"[invalid bearer token, service account token has expired]",
		"invalid bearer token",
		"[invalid bearer token, context deadline exceeded]",
		`[invalid bearer token, token audiences ["https://old.example"] is invalid for the target audiences ["https://kubernetes.default.svc"]]`,
	}
	ordinary = []string{
		`httplog.go:132] "HTTP" verb="GET" URI="/api/v1/namespaces/kube-system/pods?limit=500" latency="3.318216ms" userAgent="kubectl/v1.30.14 (linux/amd64) kubernetes/6e8d9f2" audit-ID="0b7c1a52-4d0f-4b55-9a8c-2f5e1d9c7e11" srcIP="10.0.12.7:51422" resp=200`,
		`trace.go:236] Trace[1893260347]: "Update" accept:application/vnd.kubernetes.protobuf, */*,audit-id:6b1c7d9e-ae55-4a1c-8f7b-1d2e3f405060,client:10.0.78.60,api-group:coordination.k8s.io,api-version:v1,name:kube-controller-manager,subresource:,namespace:kube-system,protocol:HTTP/2.0,resource:leases,scope:resource,url:/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager,user-agent:kube-controller-manager/v1.30.14 (linux/amd64) kubernetes/6e8d9f2/leader-election,verb:PUT (29-Nov-2026 08:16:43.535) (total time: 612ms):`,
		`controller.go:615] quota admission added evaluator for: endpoints`,
		`cacher.go:473] cacher (pods): initialized`,
		`handler.go:286] Adding GroupVersion apiregistration.k8s.io v1 to ResourceManager`,
		`watch.go:250] "Watch closed" err="context canceled" resource="pods"`,
	}
)

// Write writes the log to w and returns the number of lines and of authentication lines.
func Write(w io.Writer, o Options) (lines, auth int64, err error) {
	if o.AuthShare == 0 {
		o.AuthShare = 0.05
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	}
	r := rand.New(rand.NewPCG(o.Seed, 42))
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	t := o.Start
	for written < o.Bytes {
		t = t.Add(time.Duration(r.IntN(20)) * time.Millisecond)
		host := hosts[r.IntN(len(hosts))]
		var line string
		if r.Float64() < o.AuthShare {
			auth++
			e := errors[r.IntN(len(errors))]
			line = authLine(r, t, host, e)
		} else {
			line = klogLine(t, 'I', ordinary[r.IntN(len(ordinary))])
			line = wrap(r, t, host, line)
		}
		n, werr := bw.WriteString(line + "\n")
		if werr != nil {
			return lines, auth, werr
		}
		written += int64(n)
		lines++
	}
	return lines, auth, bw.Flush()
}

func klogLine(t time.Time, sev byte, body string) string {
	return fmt.Sprintf("%c%s       1 %s", sev, t.Format("0102 15:04:05.000000"), body)
}

func authLine(r *rand.Rand, t time.Time, host, e string) string {
	switch r.IntN(4) {
	case 0: // 1.19-1.20 unstructured
		return wrap(r, t, host, klogLine(t, 'E', "authentication.go:53] Unable to authenticate the request due to an error: "+e))
	case 1: // klog JSON
		b, _ := json.Marshal(map[string]any{"ts": float64(t.UnixMicro()) / 1e6, "caller": "filters/authentication.go:75",
			"msg": "Unable to authenticate the request", "err": e, "v": 0})
		return string(b)
	default: // structured
		q, _ := json.Marshal(e)
		return wrap(r, t, host, klogLine(t, 'E', `authentication.go:75] "Unable to authenticate the request" err=`+string(q)))
	}
}

// wrap puts a klog line into one of the envelopes the field produces.
func wrap(r *rand.Rand, t time.Time, host, line string) string {
	switch r.IntN(4) {
	case 0:
		return t.Format(time.RFC3339Nano) + " stderr F " + line
	case 1:
		b, _ := json.Marshal(map[string]string{"log": line + "\n", "stream": "stderr", "time": t.Format(time.RFC3339Nano)})
		return string(b)
	case 2:
		return "kube-apiserver-" + host + ".eu-west-2.compute.internal kube-apiserver " + line
	}
	return line
}
