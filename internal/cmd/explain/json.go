package explain

import (
	"encoding/json"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

func jsonOf(c *catalogue.Catalogue) ([]byte, error) {
	return json.Marshal(c)
}
