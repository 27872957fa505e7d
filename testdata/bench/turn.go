package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// turnResult is what measureInTurn measured of one size: its no-op plan,
// config load and raw LISTs, each once per round, every size in turn, and
// the API server's CPU (user and system) during the plan and during the
// raw LISTs: the server shares the machine's cores with gpuform, and how
// much it spends on the same requests (its collections, above all) moves
// a plan against its floor.
type turnResult struct {
	plan, load, list       sample
	planServer, listServer sample
}

// measureInTurn measures the no-op plan (with its floor: config load and
// the raw LISTs) of every size measured, one size after the other in each
// round, on the clusters gpuform applied (all running), in the opposite
// order every other round. Plan time per 1,000 objects compares sizes;
// measured size after size, minutes apart, it would compare this machine's
// speed at two times as well (it drifts by a third and more within
// minutes), so the comparison is made here, round by round.
func (b *bench) measureInTurn(ctx context.Context, rs []*sizeResult) error {
	if len(rs) < 2 {
		return nil
	}
	servers := make([]*kubeapitest.Server, len(rs))
	defer func() {
		for _, s := range servers {
			if s != nil {
				s.Stop()
			}
		}
	}()
	for i, r := range rs {
		s, err := kubeapitest.StartOptions(b.files(r.size.Name).run, serverOptions())
		if err != nil {
			return fmt.Errorf("size %s: restart the applied cluster: %w", r.size.Name, err)
		}
		servers[i] = s
		r.turn = &turnResult{}
	}
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	for round := range b.runs {
		seq := slices.Clone(order)
		if round%2 == 1 {
			slices.Reverse(seq)
		}
		var line []string
		for _, i := range seq {
			if err := b.turnOnce(ctx, rs[i], servers[i]); err != nil {
				return fmt.Errorf("size %s, sizes in turn: %w", rs[i].size.Name, err)
			}
			t := rs[i].turn
			line = append(line, fmt.Sprintf("%s plan %s (%.0f ms per 1,000 objects, server CPU %s), floor %s (server CPU %s)", rs[i].size.Name,
				secs(t.plan[round]), perThousand(t.plan[round], rs[i].objects), secs(t.planServer[round]),
				secs(t.load[round]+t.list[round]), secs(t.listServer[round])))
		}
		b.logf("sizes in turn, round %d: %s", round+1, strings.Join(line, "; "))
	}
	return nil
}

// turnOnce measures one no-op plan of r's configuration on s, then its
// floor: config load (gpuform validate) and the plan's LISTs raw.
func (b *bench) turnOnce(ctx context.Context, r *sizeResult, s *kubeapitest.Server) error {
	f := b.files(r.size.Name)
	b.quiet(ctx, s)
	res, _, lists, err := b.noopPlan(ctx, f, s)
	if err != nil {
		return err
	}
	r.turn.plan = append(r.turn.plan, res.wall)
	r.turn.planServer = append(r.turn.planServer, res.server)
	cfg, err := s.RESTConfig()
	if err != nil {
		return err
	}
	fl, err := b.floor(ctx, f, s, cfg, lists)
	if err != nil {
		return err
	}
	r.turn.load = append(r.turn.load, fl.load)
	r.turn.list = append(r.turn.list, fl.list)
	r.turn.listServer = append(r.turn.listServer, fl.listServer)
	return nil
}

// turnTable renders measureInTurn's results: per size, the plan and its
// floor per 1,000 objects, and each against the size before it in the
// table (a ratio over 1.00x: more time per object than that size).
func turnTable(rs []*sizeResult) string {
	var measured []*sizeResult
	for _, r := range rs {
		if r.turn != nil && len(r.turn.plan) > 0 {
			measured = append(measured, r)
		}
	}
	if len(measured) < 2 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n#### Scaling, the sizes measured in turn (seconds: median, min–max; %d rounds, one plan of each size per round, the order reversed every other round)\n\n", len(measured[0].turn.plan))
	b.WriteString("| size | objects | plan no-op | plan ms per 1,000 objects | against the size before | floor (load + LISTs) | floor ms per 1,000 objects | against the size before | API server CPU: plan / raw LISTs |\n")
	b.WriteString("|---|---:|---|---:|---:|---|---:|---:|---|\n")
	perK := func(r *sizeResult) (plan, floor float64) {
		return perThousand(r.turn.plan.median(), r.objects), perThousand(r.turn.load.median()+r.turn.list.median(), r.objects)
	}
	var prevP, prevF float64
	for i, r := range measured {
		p, fl := perK(r)
		against := func(v, prev float64) string {
			if i == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2fx", v/prev)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %s | %s | %.0f | %s | %s / %s |\n", r.size.Name, r.objects,
			cell(r.turn.plan), p, against(p, prevP), secs(r.turn.load.median()+r.turn.list.median()), fl, against(fl, prevF),
			cell(r.turn.planServer), cell(r.turn.listServer))
		prevP, prevF = p, fl
	}
	return b.String()
}
