package compile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
)

// schedulerArguments maps each argument some scheduler of the backends
// table declares in Arguments ("tenant.cohort") to the schedulers that read
// it, sorted.
func schedulerArguments(s *config.Settings) map[string][]string {
	users := map[string][]string{}
	for name, mk := range schedulers() {
		for _, a := range mk(s).Arguments() {
			users[a] = append(users[a], name)
		}
	}
	for _, names := range users {
		sort.Strings(names)
	}
	return users
}

// foreignArguments reports every argument written in cfg that only other
// schedulers than sched (the stack's, named scheduler) read: it would be
// accepted and do nothing. users is schedulerArguments' map.
func foreignArguments(cfg *config.Config, scheduler string, sched Scheduler, users map[string][]string) hcl.Diagnostics {
	own := map[string]bool{}
	for _, a := range sched.Arguments() {
		own[a] = true
	}
	args := make([]string, 0, len(users))
	for a := range users {
		if !own[a] {
			args = append(args, a)
		}
	}
	sort.Strings(args)
	var diags hcl.Diagnostics
	for _, path := range args {
		block, attr := splitArgument(path)
		metas, _ := cfg.Blocks(block)
		for _, m := range metas {
			if !m.HasAttr(attr) {
				continue
			}
			diags = append(diags, errorAt(m.Range(attr), "Argument for another scheduler",
				"%s is read only by scheduler %s, and this stack's scheduler is %q, which ignores it. Set scheduler = %q in the gpuform block, or remove %s from %s.",
				attr, quotedList(users[path]), scheduler, users[path][0], attr, m.Address))
		}
	}
	return diags
}

// splitArgument splits "tenant.quota.borrowing_limit" into its block path
// ("tenant.quota") and argument ("borrowing_limit").
func splitArgument(path string) (block, attr string) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}

// quotedList is names quoted and joined: "kueue", or "kueue" or "volcano".
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
