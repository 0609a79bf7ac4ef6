package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// A small SVG renderer for the page's three kinds of plot: horizontal
// bars with their values printed, a histogram on a log count axis, and a
// heat map of rectangles. It writes inline <svg> elements that need no
// script, font or image: text in the page's font (Liberation Sans,
// metric-compatible with Arial and Helvetica, which the browser
// substitutes when it lacks it). Coordinates are in the viewBox's units,
// svgWidth wide; the page's CSS scales a plot to its column.
//
// The elements carry what a test checks of the geometry: bars are
// rect.bar with data-value, each plot's area rect.area, a heat map's rows
// g.hrow with data-row and its row ticks g.ytick with the same data-row.

const (
	svgWidth  = 640.0
	titleSize = 13.0
	labelSize = 11.0
	tickSize  = 10.0
	gridColor = "#e1e4e8"
	axisColor = "#57606a"
	textColor = "#1d232a"
)

// Plot colours: bars of counts, and bars of trouble (faults, races,
// failed CAS, order-sensitive addresses).
const (
	barColor   = "#3b6ea8"
	alarmColor = "#c0392b"
	okColor    = "#2e8b57"
)

// svgDoc is one plot being written.
type svgDoc struct {
	b    strings.Builder
	w, h float64
}

// newSVG starts a plot of the given height, its title centred on top.
func newSVG(title string, h float64) *svgDoc {
	s := &svgDoc{w: svgWidth, h: h}
	fmt.Fprintf(&s.b, `<svg class="plot" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" font-family="&#34;Liberation Sans&#34;, Arial, Helvetica, sans-serif" fill="%s">`,
		html.EscapeString(title), num(s.w), num(h), num(s.w), num(h), textColor)
	s.b.WriteString("\n")
	s.text(s.w/2, 18, "middle", titleSize, `font-weight="bold"`, title)
	return s
}

// html ends the plot.
func (s *svgDoc) html() template.HTML {
	s.b.WriteString("</svg>")
	return template.HTML(s.b.String()) // #nosec: every text is escaped by text()
}

// num writes a coordinate: at most two decimals, none when whole.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// text writes t at (x, y) (y its baseline), anchored start, middle or end.
func (s *svgDoc) text(x, y float64, anchor string, size float64, attrs, t string) {
	fmt.Fprintf(&s.b, `<text x="%s" y="%s" text-anchor="%s" font-size="%s"`, num(x), num(y), anchor, num(size))
	if attrs != "" {
		s.b.WriteString(" " + attrs)
	}
	fmt.Fprintf(&s.b, ">%s</text>\n", html.EscapeString(t))
}

func (s *svgDoc) line(x1, y1, x2, y2 float64, color string) {
	fmt.Fprintf(&s.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", num(x1), num(y1), num(x2), num(y2), color)
}

// area marks the plot area, the extent of its axes (rect.area, not
// drawn), and draws its left and bottom axes.
func (s *svgDoc) area(x0, y0, x1, y1 float64) {
	fmt.Fprintf(&s.b, `<rect class="area" x="%s" y="%s" width="%s" height="%s" fill="none" stroke="none"/>`+"\n",
		num(x0), num(y0), num(x1-x0), num(y1-y0))
	s.line(x0, y0, x0, y1, axisColor)
	s.line(x0, y1, x1, y1, axisColor)
}

// bar draws a bar of value v (its data-value, for tests and tooltips).
func (s *svgDoc) bar(x, y, w, h float64, fill string, v float64, tip string) {
	fmt.Fprintf(&s.b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s" data-value="%s"><title>%s</title></rect>`+"\n",
		num(x), num(y), num(w), num(h), fill, strconv.FormatFloat(v, 'g', -1, 64), html.EscapeString(tip))
}

// textWidth estimates the width of t in the page's sans-serif font: 0.6
// em a character, a little more than Arial's digits and lower case take.
func textWidth(t string, size float64) float64 {
	return 0.6 * size * float64(len([]rune(t)))
}

// linAxis is a linear axis from 0 to hi with ticks every step.
type linAxis struct {
	hi, step float64
	ticks    []float64
}

// niceStep is the step of 1, 2 or 5 times a power of ten nearest above
// span/n; at least 1 when integer.
func niceStep(span float64, n int, integer bool) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * p
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	if integer && step < 1 {
		step = 1
	}
	return step
}

// newLinAxis is an axis from 0 to the first tick at or above max, with
// about n ticks; an integer axis (counts) has whole ticks.
func newLinAxis(max float64, n int, integer bool) linAxis {
	if max <= 0 {
		max = 1
	}
	step := niceStep(max, n, integer)
	a := linAxis{step: step, hi: math.Ceil(max/step-1e-9) * step}
	for k := 0; float64(k)*step <= a.hi+step/1e6; k++ {
		a.ticks = append(a.ticks, float64(k)*step)
	}
	return a
}

// tickLabel writes v as a tick of an axis of the given step: whole
// numbers with thousands separators, others with as many decimals as the
// step has, no more.
func tickLabel(v, step float64) string {
	d := 0
	for ; d < 9; d++ {
		x := step * math.Pow(10, float64(d))
		if math.Abs(x-math.Round(x)) < 1e-6*x {
			break
		}
	}
	if d == 0 {
		return commas(uint64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// hbar is one bar of a horizontal bar chart: its label on the left, its
// value, and the text printed at its end.
type hbar struct {
	Label string
	Value float64
	Text  string
	Color string // "" for the chart's colour
}

// hbars draws bars, the first on top, on a linear axis from 0 that ends
// at a tick at or beyond the largest value, so that every bar ends within
// the axis; each bar's value is printed at its end. integer: the values
// are counts, ticked by whole numbers.
func hbars(title, xlabel string, bars []hbar, color string, integer bool) template.HTML {
	const rowH, barH, top, bottom = 17.0, 12.0, 30.0, 42.0
	labelW, valueW, max := 0.0, 0.0, 0.0
	for _, b := range bars {
		labelW = math.Max(labelW, textWidth(b.Label, tickSize))
		valueW = math.Max(valueW, textWidth(b.Text, tickSize))
		max = math.Max(max, b.Value)
	}
	x0 := math.Min(labelW+14, svgWidth*0.5)
	x1 := svgWidth - valueW - 14
	ax := newLinAxis(max, int(math.Max(2, math.Min(8, (x1-x0)/70))), integer)
	y0 := top
	y1 := top + rowH*float64(len(bars)) + 4
	s := newSVG(title, y1+bottom)
	xOf := func(v float64) float64 { return x0 + v/ax.hi*(x1-x0) }
	for _, t := range ax.ticks {
		x := xOf(t)
		s.line(x, y0, x, y1, gridColor)
		s.line(x, y1, x, y1+4, axisColor)
		s.text(x, y1+15, "middle", tickSize, "", tickLabel(t, ax.step))
	}
	s.area(x0, y0, x1, y1)
	for i, b := range bars {
		y := y0 + 4 + rowH*float64(i)
		c := b.Color
		if c == "" {
			c = color
		}
		s.bar(x0, y+(rowH-4-barH)/2, xOf(b.Value)-x0, barH, c, b.Value, b.Label+": "+b.Text)
		s.text(x0-5, y+barH-1, "end", tickSize, "", b.Label)
		s.text(xOf(b.Value)+4, y+barH-1, "start", tickSize, `class="value"`, b.Text)
	}
	s.text((x0+x1)/2, y1+33, "middle", labelSize, "", xlabel)
	return s.html()
}

// logAxis is a log axis from lo (below 1, so that a count of 1 has a
// visible bar) to hi, a power of ten, ticked at the powers of ten.
type logAxis struct {
	lo, hi float64
	ticks  []float64
}

func newLogAxis(max float64) logAxis {
	a := logAxis{lo: 0.5, hi: 10}
	for a.hi < max {
		a.hi *= 10
	}
	for v := 1.0; v <= a.hi; v *= 10 {
		a.ticks = append(a.ticks, v)
	}
	return a
}

// frac is where v lies between lo (0) and hi (1).
func (a logAxis) frac(v float64) float64 {
	return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
}

// column is one bar of a histogram: a whole x and its count.
type column struct {
	X uint64
	N uint64
}

// histogram draws counts by whole x as vertical bars on a log count axis,
// each count printed over its bar where there is room (and over the
// largest x's bar always), every x between the smallest and the largest
// given a slot.
func histogram(title, xlabel, ylabel string, cols []column) template.HTML {
	const top, bottom, right, plotH = 30.0, 46.0, 16.0, 220.0
	lo, hi, max := cols[0].X, cols[len(cols)-1].X, uint64(0)
	for _, c := range cols {
		max = maxU(max, c.N)
	}
	ay := newLogAxis(float64(max))
	yLabelW := 0.0
	for _, t := range ay.ticks {
		yLabelW = math.Max(yLabelW, textWidth(commas(uint64(t)), tickSize))
	}
	x0, x1 := yLabelW+30, svgWidth-right
	y0, y1 := top+12, top+12+plotH
	s := newSVG(title, y1+bottom)
	slots := float64(hi-lo) + 1
	slot := (x1 - x0) / slots
	xOf := func(x uint64) float64 { return x0 + (float64(x-lo)+0.5)*slot }
	yOf := func(v float64) float64 { return y1 - ay.frac(v)*(y1-y0) }
	for _, t := range ay.ticks {
		y := yOf(t)
		s.line(x0, y, x1, y, gridColor)
		s.line(x0-4, y, x0, y, axisColor)
		s.text(x0-6, y+3.5, "end", tickSize, "", commas(uint64(t)))
	}
	step := uint64(niceStep(slots, int(math.Max(2, math.Min(16, (x1-x0)/36))), true))
	for x := (lo + step - 1) / step * step; x <= hi; x += step {
		s.line(xOf(x), y1, xOf(x), y1+4, axisColor)
		s.text(xOf(x), y1+15, "middle", tickSize, "", strconv.FormatUint(x, 10))
	}
	s.area(x0, y0, x1, y1)
	w := math.Max(1.5, 0.8*slot)
	for _, c := range cols {
		y := yOf(float64(c.N))
		s.bar(xOf(c.X)-w/2, y, w, y1-y, barColor, float64(c.N), fmt.Sprintf("%s %d: %s", xlabelShort(xlabel), c.X, commas(c.N)))
		if t := commas(c.N); 0.55*9*float64(len(t)) <= slot || c.X == hi {
			s.text(xOf(c.X), y-3, "middle", 9, `class="value"`, t)
		}
	}
	s.text((x0+x1)/2, y1+33, "middle", labelSize, "", xlabel)
	s.text(12, (y0+y1)/2, "middle", labelSize, fmt.Sprintf(`transform="rotate(-90 12 %s)"`, num((y0+y1)/2)), ylabel)
	return s.html()
}

// xlabelShort is an axis label up to its first space: the column's name.
func xlabelShort(l string) string {
	if i := strings.IndexByte(l, ' '); i > 0 {
		return l[:i]
	}
	return l
}

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// heatStops are the heat map's colours, from one lane (light) to the most
// (dark); levels between are interpolated.
var heatStops = [][3]float64{{0xfd, 0xe7, 0xa9}, {0xf6, 0xa5, 0x4e}, {0xdd, 0x5a, 0x1e}, {0x9e, 0x1b, 0x16}, {0x45, 0x07, 0x0b}}

const heatLevels = 24

// heatColor is level k of heatLevels.
func heatColor(k int) string {
	t := float64(k) / float64(heatLevels-1) * float64(len(heatStops)-1)
	i := min(int(t), len(heatStops)-2)
	f := t - float64(i)
	var c [3]int
	for j := range c {
		c[j] = int(math.Round(heatStops[i][j]*(1-f) + heatStops[i+1][j]*f))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// heatLevel is the level of a cell of v lanes, 1 ≤ v ≤ max.
func heatLevel(v, max uint64) int {
	if max <= 1 {
		return heatLevels - 1
	}
	return int(math.Round(float64(v-1) / float64(max-1) * float64(heatLevels-1)))
}

// heatMap draws cells[row][col] (0: white, nothing) as rectangles: row r
// fills the band from r to r+1 of the y axis, centred on its tick, row 0
// on top; columns span xSpan units of the x axis. rowLabel labels a row's
// tick; every step-th row is labelled, and the last row always.
func heatMap(title, xlabel, ylabel string, cells [][]uint64, max uint64, xSpan float64, rowLabel func(r int) string) template.HTML {
	const top, bottom, legendW = 30.0, 46.0, 70.0
	rows, colsN := len(cells), len(cells[0])
	step := (rows + 15) / 16
	labelW := 0.0
	for r := 0; r < rows; r++ {
		labelW = math.Max(labelW, textWidth(rowLabel(r), 9))
	}
	x0, x1 := labelW+32, svgWidth-legendW
	rowH := math.Max(4, math.Min(14, 320/float64(rows)))
	y0 := top + 8
	y1 := y0 + rowH*float64(rows)
	s := newSVG(title, y1+bottom)
	cw := (x1 - x0) / float64(colsN)
	// The rows, each a group of runs of cells of one colour, in cell
	// units scaled to the plot: row r is y from r to r+1.
	fmt.Fprintf(&s.b, `<g class="heat" transform="translate(%s %s) scale(%s %s)" shape-rendering="crispEdges">`+"\n", num(x0), num(y0), strconv.FormatFloat(cw, 'f', 4, 64), num(rowH))
	for r, row := range cells {
		fmt.Fprintf(&s.b, `<g class="hrow" data-row="%d">`, r)
		for c := 0; c < colsN; {
			if row[c] == 0 {
				c++
				continue
			}
			k := heatLevel(row[c], max)
			e := c + 1
			for e < colsN && row[e] != 0 && heatLevel(row[e], max) == k {
				e++
			}
			fmt.Fprintf(&s.b, `<rect x="%d" y="%d" width="%d" height="1" fill="%s"/>`, c, r, e-c, heatColor(k))
			c = e
		}
		s.b.WriteString("</g>\n")
	}
	s.b.WriteString("</g>\n")
	for r := 0; r < rows; r++ {
		if r%step != 0 && r != rows-1 {
			continue
		}
		if r != rows-1 && rows-1-r < step/2+1 && r != 0 {
			continue // too close to the last row's label
		}
		y := y0 + (float64(r)+0.5)*rowH
		fmt.Fprintf(&s.b, `<g class="ytick" data-row="%d">`, r)
		s.line(x0-4, y, x0, y, axisColor)
		s.text(x0-6, y+3, "end", 9, "", rowLabel(r))
		s.b.WriteString("</g>\n")
	}
	ax := newLinAxis(xSpan, 8, true)
	for _, t := range ax.ticks {
		if t > xSpan {
			break
		}
		x := x0 + t/xSpan*(x1-x0)
		s.line(x, y1, x, y1+4, axisColor)
		s.text(x, y1+15, "middle", tickSize, "", tickLabel(t, ax.step))
	}
	s.area(x0, y0, x1, y1)
	s.text((x0+x1)/2, y1+33, "middle", labelSize, "", xlabel)
	s.text(10, (y0+y1)/2, "middle", labelSize, fmt.Sprintf(`transform="rotate(-90 10 %s)"`, num((y0+y1)/2)), ylabel)
	// The legend: the scale from 1 lane to the most.
	lx := x1 + 22
	lh := math.Min(120, y1-y0)
	for k := 0; k < heatLevels; k++ {
		y := y0 + lh - float64(k+1)*lh/heatLevels
		fmt.Fprintf(&s.b, `<rect x="%s" y="%s" width="12" height="%s" fill="%s"/>`+"\n", num(lx), num(y), num(lh/heatLevels+0.3), heatColor(k))
	}
	s.text(lx+16, y0+8, "start", 9, "", commas(max))
	s.text(lx+16, y0+lh, "start", 9, "", "1")
	s.text(lx+6, y0+lh+14, "middle", 9, "", "lanes")
	return s.html()
}
