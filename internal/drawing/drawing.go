// Package drawing is a signature drawn with a finger or a mouse, as the
// signing page's pad sends it and the record keeps it: strokes of points on
// a Width by Height grid, written as text ("x,y x,y;x,y x,y", a stroke per
// ";"). Text of small integers, not an image: it is checked in one pass,
// bounded, stored in a column, and drawn as lines in the PDF and in the
// page's SVG at any size, with nothing to decode.
package drawing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The grid a drawing's points lie on: a signature's strip, three times as
// wide as it is high.
const (
	Width  = 600
	Height = 200
)

// Bounds of a drawing: generous for a signature (a pad samples a finger's
// path at 60 to 120 points a second), small for a column and a PDF.
const (
	MaxStrokes = 100
	MaxPoints  = 3000
	// MaxBytes bounds the text: MaxPoints points of "600,200 " at most.
	MaxBytes = MaxPoints * 8
)

// Point is a point of the grid: 0 ≤ X ≤ Width, 0 ≤ Y ≤ Height, Y down.
type Point struct{ X, Y int }

// Drawing is a signature's strokes, each the points a pointer went through
// while down; a stroke of one point is a dot.
type Drawing struct {
	Strokes [][]Point
}

// Empty reports whether d has no stroke.
func (d Drawing) Empty() bool { return len(d.Strokes) == 0 }

// Parse reads a drawing's text; "" is the empty drawing. The error says
// what is wrong, for the signer's answer.
func Parse(s string) (Drawing, error) {
	if s == "" {
		return Drawing{}, nil
	}
	if len(s) > MaxBytes {
		return Drawing{}, fmt.Errorf("the drawn signature is %d bytes, more than %d", len(s), MaxBytes)
	}
	var d Drawing
	points := 0
	for stroke := range strings.SplitSeq(s, ";") {
		if len(d.Strokes) == MaxStrokes {
			return Drawing{}, fmt.Errorf("the drawn signature has more than %d strokes", MaxStrokes)
		}
		var pts []Point
		for field := range strings.SplitSeq(stroke, " ") {
			if points == MaxPoints {
				return Drawing{}, fmt.Errorf("the drawn signature has more than %d points", MaxPoints)
			}
			p, err := parsePoint(field)
			if err != nil {
				return Drawing{}, fmt.Errorf("the drawn signature's stroke %d: %w", len(d.Strokes)+1, err)
			}
			pts = append(pts, p)
			points++
		}
		d.Strokes = append(d.Strokes, pts)
	}
	return d, nil
}

var errPoint = errors.New(`a point is "x,y": two whole numbers`)

func parsePoint(s string) (Point, error) {
	xs, ys, ok := strings.Cut(s, ",")
	if !ok {
		return Point{}, errPoint
	}
	x, errX := strconv.Atoi(xs)
	y, errY := strconv.Atoi(ys)
	if errX != nil || errY != nil || strings.HasPrefix(xs, "+") || strings.HasPrefix(ys, "+") {
		return Point{}, errPoint
	}
	if x < 0 || x > Width || y < 0 || y > Height {
		return Point{}, fmt.Errorf("the point %d,%d is outside the %d by %d pad", x, y, Width, Height)
	}
	return Point{x, y}, nil
}

// String is the drawing's text, as Parse reads it.
func (d Drawing) String() string {
	var b strings.Builder
	for i, stroke := range d.Strokes {
		if i > 0 {
			b.WriteByte(';')
		}
		for j, p := range stroke {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(p.X))
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(p.Y))
		}
	}
	return b.String()
}

// SVGPath is the drawing as an SVG path's data on the Width by Height
// grid: a line through each stroke's points, a dot a zero-length one
// (drawn with round caps).
func (d Drawing) SVGPath() string {
	var b strings.Builder
	for _, stroke := range d.Strokes {
		for j, p := range stroke {
			if j == 0 {
				b.WriteByte('M')
			} else {
				b.WriteByte('L')
			}
			b.WriteString(strconv.Itoa(p.X))
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(p.Y))
		}
		if len(stroke) == 1 {
			b.WriteString("h0")
		}
	}
	return b.String()
}
