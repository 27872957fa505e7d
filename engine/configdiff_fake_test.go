package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// alert is a block type of this test only: adding a block to the language
// is a tagged struct and a tagged field, and the config diff shows it.
type alert struct {
	config.Meta
	Channel   string   `config:"channel"`
	Threshold float64  `config:"threshold"`
	Routes    []*route `config:"route,block"`
}

type route struct {
	config.Meta
	Team  string `config:"team,label"`
	Delay int    `config:"delay,omitempty"`
}

// configWithAlerts is config.Config's blocks that this test uses, plus alerts.
type configWithAlerts struct {
	Settings *config.Settings `config:"gpuform,block"`
	Alerts   []*alert         `config:"alert,block"`
	Tenants  []*config.Tenant `config:"tenant,block"`
}

func TestConfigDiffOfANewBlockType(t *testing.T) {
	settings := &config.Settings{Meta: config.Meta{Address: "gpuform"}, Stack: "s"}
	tenant := &config.Tenant{Meta: config.Meta{Address: "tenant.risk"}, Namespace: "risk", Weight: 1}
	base := &configWithAlerts{Settings: settings, Tenants: []*config.Tenant{tenant}, Alerts: []*alert{
		{Meta: config.Meta{Address: "alert.gpu"}, Channel: "slack", Threshold: 0.9},
		{Meta: config.Meta{Address: "alert.old"}, Channel: "email"},
	}}
	head := &configWithAlerts{Settings: settings, Tenants: []*config.Tenant{tenant}, Alerts: []*alert{
		{Meta: config.Meta{Address: "alert.gpu", Sensitive: map[string]bool{"channel": true}}, Channel: "pager", Threshold: 0.8,
			Routes: []*route{{Team: "risk", Delay: 5}}},
		{Meta: config.Meta{Address: "alert.new"}, Channel: "email", Routes: []*route{{Team: "ocr"}}},
	}}
	head.Tenants = []*config.Tenant{{Meta: tenant.Meta, Namespace: "risk", Weight: 2}}
	got := diffBlocks(config.FlattenStruct(base), config.FlattenStruct(head))
	var lines []string
	for _, c := range got {
		lines = append(lines, fmt.Sprintf("%s %s", c.Action.Symbol(), c.Address))
		for _, f := range c.Attributes {
			b, _ := json.Marshal(f.Before)
			a, _ := json.Marshal(f.After)
			lines = append(lines, fmt.Sprintf("  %s %s: %s -> %s", f.Op, f.Path, b, a))
		}
	}
	// Types the schema knows come first, in its order; then the others.
	want := []string{
		"~ tenant.risk",
		"  ~ weight: 1 -> 2",
		"~ alert.gpu",
		`  ~ channel: "(sensitive)" -> "(sensitive)"`,
		`  ~ threshold: 0.9 -> 0.8`,
		`  + route["risk"].delay: null -> 5`,
		"+ alert.new",
		`  + channel: null -> "email"`,
		`  + threshold: null -> 0`,
		"- alert.old",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("config diff:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
