// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import "net"

// IssueCertificate signs a leaf certificate with the lab CA (the shape of node.IssueFunc): client
// certificates carry orgs, serving certificates (server true) the IP and DNS SANs.
func (l *Lab) IssueCertificate(cn string, orgs []string, ips []net.IP, dns []string, server bool) (certPEM, keyPEM []byte, err error) {
	return l.ca.Issue(cn, orgs, ips, dns, server)
}
