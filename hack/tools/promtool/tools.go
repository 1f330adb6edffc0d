//go:build tools

// Package tools pins promtool, which checks and unit-tests the chart's
// PrometheusRule alerts (test/chart).
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
