package render

import (
	"fmt"

	"github.com/gpuform/gpuform/config"
)

// ConfigSummary is one line saying what a configuration declares, as
// gpuform validate prints it: "Stack s: 1 priority, 2 MIG layouts, 1 pool,
// 3 tenants, 0 models.".
func ConfigSummary(cfg *config.Config) string {
	return fmt.Sprintf("Stack %s: %s, %s, %s, %s, %s.",
		cfg.Settings.Stack,
		nounCount(len(cfg.Priorities), "priority", "priorities"),
		nounCount(len(cfg.MIGLayouts), "MIG layout", "MIG layouts"),
		nounCount(len(cfg.Pools), "pool", "pools"),
		nounCount(len(cfg.Tenants), "tenant", "tenants"),
		nounCount(len(cfg.Models), "model", "models"))
}

// nounCount is "1 pool", "2 pools".
func nounCount(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, PluralWord(n, one, many))
}
