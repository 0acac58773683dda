// promql checks PromQL with Prometheus's own code (github.com/prometheus/prometheus).
//
//	promql exprs < ["expr", ...]   parses each expression with promql/parser and prints, for
//	                               each, {"metrics": [names its selectors name]} or {"error": "..."}
//	promql rules < groups.yaml     validates a rule file ({groups: [...]}) with model/rulefmt, as
//	                               `promtool check rules` does (expressions, durations, label
//	                               names, annotation templates); prints {"errors": [...]}
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

type exprResult struct {
	Metrics []string `json:"metrics,omitempty"`
	Error   string   `json:"error,omitempty"`
}

func metricNames(expr parser.Expr) []string {
	seen := map[string]bool{}
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				seen[m.Value] = true
			}
		}
		return nil
	})
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func exprs(p parser.Parser, in io.Reader) (any, error) {
	var texts []string
	if err := json.NewDecoder(in).Decode(&texts); err != nil {
		return nil, fmt.Errorf("stdin: a JSON array of strings is expected: %w", err)
	}
	results := make([]exprResult, len(texts))
	for i, text := range texts {
		expr, err := p.ParseExpr(text)
		if err != nil {
			results[i] = exprResult{Error: err.Error()}
			continue
		}
		results[i] = exprResult{Metrics: metricNames(expr)}
	}
	return results, nil
}

func rules(p parser.Parser, in io.Reader) (any, error) {
	content, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	_, errs := rulefmt.Parse(content, false, model.UTF8Validation, p, logger)
	messages := make([]string, 0, len(errs))
	for _, e := range errs {
		messages = append(messages, e.Error())
	}
	return map[string][]string{"errors": messages}, nil
}

func main() {
	modes := map[string]func(parser.Parser, io.Reader) (any, error){"exprs": exprs, "rules": rules}
	if len(os.Args) != 2 || modes[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: promql exprs|rules < input")
		os.Exit(2)
	}
	out, err := modes[os.Args[1]](parser.NewParser(parser.Options{}), os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
