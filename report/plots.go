package report

import (
	"fmt"
	"html/template"
)

// The page's plots, drawn by svg.go.

func hotPlot(title string, as []Address, total uint64, c string) template.HTML {
	bars := make([]hbar, len(as))
	for i, a := range as {
		bars[i] = hbar{Label: a.Label(), Value: float64(a.Accesses), Text: commas(a.Accesses) + " (" + percent(a.Accesses, total) + ")"}
	}
	return hbars(title, "lane-element accesses (share of all accesses)", bars, c, true)
}

func conflictPlot(bins []Bin) template.HTML {
	cols := make([]column, len(bins))
	for i, b := range bins {
		cols[i] = column{uint64(b.MaxConflict), b.N}
	}
	return histogram("Conflict depth: instructions by max_conflict (log scale)",
		"max_conflict (lane-elements on the instruction's hottest address)", "instructions (log scale)", cols)
}

func opsPlot(ops []OpStat) template.HTML {
	bars := make([]hbar, len(ops))
	for i, o := range ops {
		bars[i] = hbar{Label: fmt.Sprintf("%s (%s inst, worst %d)", o.Name(), commas(o.Instructions), o.MaxConflict),
			Value: o.Mean(), Text: fmt.Sprintf("%.2f", o.Mean())}
	}
	return hbars("Serialisation by operation: mean max_conflict", "conflict_sum / instructions", bars, barColor, false)
}

// countPlot is a bar chart of counts by name, in the order given.
func countPlot(title, x string, ks []KindCount, c string) template.HTML {
	bars := make([]hbar, len(ks))
	for i, k := range ks {
		bars[i] = hbar{Label: k.Kind, Value: float64(k.N), Text: commas(k.N)}
	}
	return hbars(title, x, bars, c, true)
}

func casPlot(cs []CASStat) template.HTML {
	var bars []hbar
	for _, c := range cs {
		bars = append(bars,
			hbar{Label: c.Kind + " swapped", Value: float64(c.Swapped()), Text: commas(c.Swapped()) + " (" + percent(c.Swapped(), c.Ran) + ")", Color: okColor},
			hbar{Label: c.Kind + " failed", Value: float64(c.Failed), Text: commas(c.Failed) + " (" + percent(c.Failed, c.Ran) + ")", Color: alarmColor})
	}
	return hbars("Compare-and-swap: lane-ops that swapped and that failed", "lane-ops (share of the kind's lane-ops that ran)", bars, barColor, true)
}

func activityPlot(a *Activity) template.HTML {
	ylabel := "(group, warp)"
	if a.WarpsPerRow > 1 {
		ylabel = fmt.Sprintf("(group, warp), %d warps a row", a.WarpsPerRow)
	}
	return heatMap(fmt.Sprintf("Per-warp activity: lanes per %s instructions (darker: more)", commas(a.Window)), "seq", ylabel,
		a.Lanes, a.Max, float64(a.Window)*float64(len(a.Lanes[0])), func(r int) string {
			w := a.Warps[r*a.WarpsPerRow]
			return fmt.Sprintf("g%d w%d", w.Group, w.Warp)
		})
}

// percent is n/of as a percentage: one decimal, or two under 1%.
func percent(n, of uint64) string {
	if of == 0 {
		return "—"
	}
	p := 100 * float64(n) / float64(of)
	if p > 0 && p < 1 {
		return fmt.Sprintf("%.2f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}
