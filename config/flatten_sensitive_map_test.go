package config_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// A map from a sensitive variable (a model's env) flattens to one
// sensitive path: its keys are part of the value, so the PR preview's
// config diff, which prints paths, never shows them. A plain map keeps a
// path per key.
func TestFlattenKeepsSensitiveMapKeys(t *testing.T) {
	const src = `
gpuform { stack = "s" }
variable "env" {
  type      = map(string)
  default   = { SECRET_NAME_` + sensitiveMarker + ` = "x" }
  sensitive = true
}
pool "p" {
  gpu = "L4"
}
tenant "t" {
  quota "p" {
    gpus = 1
  }
}
model "hidden" {
  tenant      = tenant.t
  pool        = pool.p
  format      = "onnx"
  storage_uri = "s3://m"
  env         = var.env
}
model "plain" {
  tenant      = tenant.t
  pool        = pool.p
  format      = "onnx"
  storage_uri = "s3://m"
  env         = { VISIBLE = "1" }
}
`
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	paths := map[string][]config.FlatAttr{}
	for _, b := range cfg.Flatten() {
		for _, a := range b.Attrs {
			if strings.HasPrefix(a.Path, "env") {
				paths[b.Address] = append(paths[b.Address], a)
			}
			if strings.Contains(a.Path, sensitiveMarker) {
				t.Errorf("%s: path %s shows a sensitive key", b.Address, a.Path)
			}
		}
	}
	if h := paths["model.hidden"]; len(h) != 1 || h[0].Path != "env" || !h[0].Sensitive {
		t.Errorf("model.hidden's env flattens to %+v, want one sensitive path env", h)
	}
	if p := paths["model.plain"]; len(p) != 1 || p[0].Path != `env["VISIBLE"]` || p[0].Sensitive {
		t.Errorf("model.plain's env flattens to %+v, want env[\"VISIBLE\"]", p)
	}
}
