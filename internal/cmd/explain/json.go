// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package explain

import (
	"encoding/json"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

func jsonOf(c *catalogue.Catalogue) ([]byte, error) {
	return json.Marshal(c)
}
