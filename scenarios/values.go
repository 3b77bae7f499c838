package scenarios

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// Value syntax shared by the file format and --set: durations and rates.

var (
	errSyntax   = errors.New("syntax")
	errNegative = errors.New("negative")
	errRange    = errors.New("out of range")
)

// ParseDuration parses Go duration syntax plus `d` for days (24h): `90s`, `2h30m`, `1.5d`,
// `3d12h`. A bare `0` is zero. A leading `-` yields a negative duration; the scenario format
// rejects those, but the syntax is accepted so the message can say "negative".
func ParseDuration(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	switch {
	case errors.Is(err, errSyntax):
		return 0, errors.New("scenarios: " + strconv.Quote(s) + " is not a duration; want Go syntax plus d, such as 90s, 2h30m, 3d")
	case errors.Is(err, errRange):
		return 0, errors.New("scenarios: duration " + strconv.Quote(s) + " is out of range (at most about 290 years)")
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, error) {
	neg := false
	if s != "" && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, errSyntax
	}
	var total time.Duration
	for s != "" {
		// One component: a decimal number, then a unit.
		i := 0
		dots := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			if s[i] == '.' {
				dots++
			}
			i++
		}
		num := s[:i]
		if num == "" || num == "." || dots > 1 {
			return 0, errSyntax
		}
		s = s[i:]
		j := 0
		for j < len(s) && !(s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		unit := s[:j]
		s = s[j:]
		var part time.Duration
		switch unit {
		case "ns", "us", "µs", "μs", "ms", "s", "m", "h":
			p, err := time.ParseDuration(num + unit)
			if err != nil {
				return 0, classifyDurationErr(err)
			}
			part = p
		case "d":
			// A day is 24h; multiplying the parsed hours keeps fractions exact to the ns.
			h, err := time.ParseDuration(num + "h")
			if err != nil {
				return 0, classifyDurationErr(err)
			}
			if h > math.MaxInt64/24 {
				return 0, errRange
			}
			part = h * 24
		default:
			return 0, errSyntax
		}
		if total > math.MaxInt64-part {
			return 0, errRange
		}
		total += part
	}
	if neg {
		return -total, errNegative
	}
	return total, nil
}

func classifyDurationErr(err error) error {
	if strings.Contains(err.Error(), "invalid duration") {
		return errRange
	}
	return errSyntax
}

// ParseRate parses `N/unit`: N events per unit of time, where unit is a duration (`24h`,
// `1.5d`) or a bare unit (`s`, `m`, `h`, `d`): `50/m`, `100/h`, `1/24h`. N may be zero or
// fractional; it may not be negative.
func ParseRate(s string) (Rate, error) {
	r, err := parseRate(s)
	if err != nil {
		return Rate{}, errors.New("scenarios: " + strconv.Quote(s) + " is not a rate; want N/unit such as 50/m, 100/h, 1/24h")
	}
	return r, nil
}

func parseRate(s string) (Rate, error) {
	num, per, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, errSyntax
	}
	num, per = strings.TrimSpace(num), strings.TrimSpace(per)
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n < 0 || !plainNumber(num) {
		return Rate{}, errSyntax
	}
	if per != "" && !(per[0] >= '0' && per[0] <= '9' || per[0] == '.') {
		per = "1" + per
	}
	d, err := parseDuration(per)
	if err != nil || d <= 0 {
		return Rate{}, errSyntax
	}
	return Rate{PerSecond: n / d.Seconds()}, nil
}

// plainNumber reports whether s is written with digits and at most one dot (no sign,
// exponent, hex or underscores), the only number form a rate accepts.
func plainNumber(s string) bool {
	if s == "" || s == "." {
		return false
	}
	dots := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '.':
			dots++
		case s[i] < '0' || s[i] > '9':
			return false
		}
	}
	return dots <= 1
}

// fmtDuration prints a duration the way the file format writes it, with days for whole
// multiples of 24h: 30d, 1h30m, 200ms.
func fmtDuration(d time.Duration) string {
	if d != 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.String()
	// time.Duration prints 1h30m0s; the trailing zero units add nothing.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// fmtNumber prints a float the shortest way that reads back to the same value.
func fmtNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
