package main

import "testing"

// The in-turn table gives each size's plan and floor per 1,000 objects,
// their ratio to the size before's and the API server's CPU in the plan and
// in the raw LISTs; it is empty unless two sizes were measured in turn.
func TestTurnTable(t *testing.T) {
	m := sizeM()
	m.objects = 10000
	m.turn = &turnResult{plan: ms(600, 560, 650), load: ms(220, 200, 240), list: ms(260, 250, 300),
		planServer: ms(300, 280, 310), listServer: ms(290, 270, 300)}
	l := sizeM()
	l.size.Name, l.objects = "L", 50000
	l.turn = &turnResult{plan: ms(2800, 2700, 3300), load: ms(1000, 1100, 1050), list: ms(1500, 1400, 1600),
		planServer: ms(2500, 1600, 2600), listServer: ms(1000, 1000, 1100)}
	got := turnTable([]*sizeResult{m, l})
	containsAll(t, "turn table", got,
		"3 rounds, one plan of each size per round",
		"| plan ms per 1,000 objects | against the size before | floor (load + LISTs) | floor ms per 1,000 objects | against the size before | API server CPU: plan / raw LISTs |",
		"| M | 10000 | 0.60 (0.56–0.65) | 60 | – | 0.48 | 48 | – | 0.30 (0.28–0.31) / 0.29 (0.27–0.30) |",
		"| L | 50000 | 2.80 (2.70–3.30) | 56 | 0.93x | 2.55 | 51 | 1.06x | 2.50 (1.60–2.60) / 1.00 (1.00–1.10) |",
	)
	l.turn = nil
	if got := turnTable([]*sizeResult{m, l}); got != "" {
		t.Errorf("one size measured in turn: got a table\n%s", got)
	}
}
