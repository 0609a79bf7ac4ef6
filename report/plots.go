package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	barColor   = color.RGBA{0x3b, 0x6e, 0xa8, 0xff}
	alarmColor = color.RGBA{0xc0, 0x39, 0x2b, 0xff}
	plotWidth  = 16 * vg.Centimeter
)

// newPlot is a plot with the page's font: Liberation Sans, metric-compatible
// with Arial and Helvetica, which the browser substitutes when it lacks it
// (the SVG names the font and embeds none, so the page stays small).
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	sans := func(s *font.Font) { s.Variant = "Sans" }
	sans(&p.Title.TextStyle.Font)
	sans(&p.X.Label.TextStyle.Font)
	sans(&p.Y.Label.TextStyle.Font)
	sans(&p.X.Tick.Label.Font)
	sans(&p.Y.Tick.Label.Font)
	p.Title.TextStyle.Font.Size = 13
	return p
}

// svg draws p as an inline <svg> element (no XML prelude) of the given size.
func svg(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("report: gonum/plot wrote no <svg> element")
	}
	// The prelude's comment and XML declaration do not belong in HTML;
	// the role and class let the page's CSS scale the plot to the column.
	s = `<svg class="plot" role="img" aria-label="` + template.HTMLEscapeString(p.Title.Text) + `"` + s[i+len("<svg"):]
	return template.HTML(s), nil // #nosec: gonum/plot escapes the text it writes
}

// hbars is a horizontal bar chart of values labelled by labels, the first on
// top.
func hbars(title, x string, labels []string, values []float64, c color.Color) (template.HTML, error) {
	n := len(values)
	vs := make(plotter.Values, n)
	ls := make([]string, n)
	for i := range values { // gonum draws bar 0 at the bottom
		vs[n-1-i] = values[i]
		ls[n-1-i] = labels[i]
	}
	p := newPlot(title, x, "")
	b, err := plotter.NewBarChart(vs, vg.Points(9))
	if err != nil {
		return "", err
	}
	b.Horizontal = true
	b.Color = c
	b.LineStyle.Width = 0
	p.Add(b, plotter.NewGrid())
	p.NominalY(ls...)
	p.X.Min = 0
	p.Y.Tick.Label.Font.Size = 8
	return svg(p, plotWidth, vg.Points(60+14*float64(n)))
}

func hotPlot(title string, as []Address, c color.Color) (template.HTML, error) {
	ls := make([]string, len(as))
	vs := make([]float64, len(as))
	for i, a := range as {
		ls[i], vs[i] = a.Label(), float64(a.Accesses)
	}
	return hbars(title, "lane-element accesses", ls, vs, c)
}

func conflictPlot(bins []Bin) (template.HTML, error) {
	p := newPlot("Conflict depth: instructions by max_conflict", "max_conflict (lane-elements on the instruction's hottest address)", "instructions")
	hb := make([]plotter.HistogramBin, len(bins))
	for i, b := range bins {
		hb[i] = plotter.HistogramBin{Min: float64(b.MaxConflict) - 0.4, Max: float64(b.MaxConflict) + 0.4, Weight: float64(b.N)}
	}
	h := &plotter.Histogram{Bins: hb, Width: 0.8, FillColor: barColor}
	h.LineStyle.Width = 0
	p.Add(h, plotter.NewGrid())
	p.Y.Min = 0
	if bins[len(bins)-1].MaxConflict <= 40 {
		var ticks []plot.Tick
		step := uint32(1)
		if bins[len(bins)-1].MaxConflict > 16 {
			step = 4
		}
		for v := uint32(0); v <= bins[len(bins)-1].MaxConflict; v += step {
			ticks = append(ticks, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	return svg(p, plotWidth, 8*vg.Centimeter)
}

func opsPlot(ops []OpStat) (template.HTML, error) {
	ls := make([]string, len(ops))
	vs := make([]float64, len(ops))
	for i, o := range ops {
		ls[i] = fmt.Sprintf("%s (%d inst, worst %d)", o.Name(), o.Instructions, o.MaxConflict)
		vs[i] = o.Mean()
	}
	return hbars("Serialisation by operation: mean max_conflict", "conflict_sum / instructions", ls, vs, barColor)
}

// hbarsCounts is a bar chart of counts by name, in the order given.
func hbarsCounts(title, x string, ks []KindCount, c color.Color) (template.HTML, error) {
	ls := make([]string, len(ks))
	vs := make([]float64, len(ks))
	for i, k := range ks {
		ls[i], vs[i] = k.Kind, float64(k.N)
	}
	return hbars(title, x, ls, vs, c)
}

func faultPlot(title string, ks []KindCount) (template.HTML, error) {
	ls := make([]string, len(ks))
	vs := make([]float64, len(ks))
	for i, k := range ks {
		ls[i], vs[i] = k.Kind, float64(k.N)
	}
	return hbars(title, "faulted lane-elements", ls, vs, alarmColor)
}

// grid is the activity as gonum's GridXYZ: columns are windows, rows warp rows.
type grid struct{ a *Activity }

func (g grid) Dims() (c, r int) { return len(g.a.Lanes[0]), len(g.a.Lanes) }
func (g grid) Z(c, r int) float64 {
	v := g.a.Lanes[r][c]
	if v == 0 {
		return math.NaN() // drawn white: the warp ran nothing then
	}
	return float64(v)
}
func (g grid) X(c int) float64 { return (float64(c) + 0.5) * float64(g.a.Window) }
func (g grid) Y(r int) float64 { return float64(r) }

func activityPlot(a *Activity) (template.HTML, error) {
	ylabel := "(group, warp)"
	if a.WarpsPerRow > 1 {
		ylabel = fmt.Sprintf("(group, warp), %d warps a row", a.WarpsPerRow)
	}
	p := newPlot(fmt.Sprintf("Per-warp activity: lanes per %d instructions (darker: more)", a.Window), "seq", ylabel)
	pal := palette.Heat(48, 1)
	cs := pal.Colors()
	// Heat runs from dark to light; reverse it so that busy cells are dark.
	rev := make([]color.Color, len(cs))
	for i, c := range cs {
		rev[len(cs)-1-i] = c
	}
	h := plotter.NewHeatMap(grid{a}, fixedPalette(rev))
	h.NaN = color.White
	h.Min, h.Max = 1, math.Max(2, float64(a.Max))
	h.Underflow, h.Overflow = rev[0], rev[len(rev)-1]
	h.Rasterized = true
	p.Add(h)
	rows := len(a.Lanes)
	step := (rows + 15) / 16
	var ticks []plot.Tick
	for r := 0; r < rows; r++ {
		t := plot.Tick{Value: float64(r)}
		if r%step == 0 {
			w := a.Warps[r*a.WarpsPerRow]
			t.Label = fmt.Sprintf("g%d w%d", w.Group, w.Warp)
		}
		ticks = append(ticks, t)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Label.Font.Size = 8
	return svg(p, plotWidth, vg.Points(120+float64(min(rows, 64))*6))
}

type fixedPalette []color.Color

func (p fixedPalette) Colors() []color.Color { return p }
