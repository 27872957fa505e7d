package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/usage"
)

// chromium is $CHROMIUM (make test sets it), else the Debian package's binary.
func chromium() string {
	if c := os.Getenv("CHROMIUM"); c != "" {
		return c
	}
	return "/usr/bin/chromium"
}

// screenshot renders the HTML file at page in headless Chromium, 1000 pixels
// wide, and returns the PNG.
func screenshot(t *testing.T, page string) image.Image {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1000,1400", "--screenshot="+shot, "file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s (install the Debian package chromium, or run make test): %v\n%s", chromium(), err, out)
	}
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// near reports whether c is within a small distance of the colour hex
// (#rrggbb).
func near(c color.Color, hex string) bool {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	r, g, b, _ := c.RGBA()
	d := func(x uint32, want uint64) int { return int(x>>8) - int(want) }
	dr, dg, db := d(r, v>>16&0xff), d(g, v>>8&0xff), d(b, v&0xff)
	return dr*dr+dg*dg+db*db < 30*30
}

// charts is what chartsIn found in a screenshot.
type charts struct {
	allocatedBar, usedBar int // tallest vertical run of each bar colour, pixels
	barsBottom            int // lowest row of a bar
	quotaPixels           int // quota line pixels below the bars
}

// chartsIn finds the report's charts by their colours: bars are tall
// vertical runs of the allocated and used colours; the quota lines of the
// charts over time lie below them.
func chartsIn(img image.Image) charts {
	var c charts
	bd := img.Bounds()
	for x := bd.Min.X; x < bd.Max.X; x++ {
		a, u := 0, 0
		for y := bd.Min.Y; y < bd.Max.Y; y++ {
			px := img.At(x, y)
			if near(px, render.ColorAllocated) {
				a++
				if a > c.allocatedBar {
					c.allocatedBar = a
				}
				if a >= 20 && y > c.barsBottom {
					c.barsBottom = y
				}
			} else {
				a = 0
			}
			if near(px, render.ColorUsed) {
				u++
				c.usedBar = max(c.usedBar, u)
			} else {
				u = 0
			}
		}
	}
	for y := c.barsBottom + 1; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if near(img.At(x, y), render.ColorQuota) {
				c.quotaPixels++
			}
		}
	}
	return c
}

// TestUsageHTMLScreenshot opens the HTML report of TestUsageAgainstPrometheus
// (testdata/usage/report.html, its golden) in a real headless Chromium and
// checks the screenshot for its charts: bars of GPU-hours per tenant in the
// allocated and used colours, and below them the quota lines of the charts
// over time. A report without data has none of them, which shows the check
// can fail. With -update it keeps the screenshot as testdata/usage/report.png
// (docs/usage.md shows it).
func TestUsageHTMLScreenshot(t *testing.T) {
	page, err := filepath.Abs("../../testdata/usage/report.html")
	if err != nil {
		t.Fatal(err)
	}
	img := screenshot(t, page)
	got := chartsIn(img)
	if got.allocatedBar < 40 || got.usedBar < 20 || got.quotaPixels < 300 {
		t.Errorf("the screenshot lacks the charts: %+v; want bars of at least 40 (allocated) and 20 (used) pixels and 300 quota-line pixels below them", got)
	}
	if *update {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../testdata/usage/report.png", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The negative control: the same page without data.
	empty := filepath.Join(t.TempDir(), "empty.html")
	var b bytes.Buffer
	w, _ := usage.NewWindow(usageT0, usageT0.Add(time.Hour), time.Minute)
	if err := render.UsageHTML(&b, &usage.Report{Window: w, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if none := chartsIn(screenshot(t, empty)); none.allocatedBar >= 40 || none.quotaPixels >= 300 {
		t.Errorf("a report without data passes the chart check: %+v", none)
	}
}
