// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package supervisor runs a lab (package lab) in a long-lived process that owns its children and
// answers commands over HTTP+JSON on a unix socket in the lab directory (<dir>/lab.sock). The CLI's
// `credwatch lab up` starts one (`credwatch lab serve`, detached); `lab down|status|add-member|
// remove-member|roll` are clients. Other features can be hosted next to the lab as Services.
package supervisor
