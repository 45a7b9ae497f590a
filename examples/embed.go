// Package examples holds the study files shipped with dblat. The quickstart study is
// embedded in the binary so that `dblat quickstart` needs no file on disk.
package examples

import _ "embed"

// Quickstart is examples/quickstart.yaml, the study `dblat quickstart` runs.
//
//go:embed quickstart.yaml
var Quickstart []byte
