package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
)

// frontMatter is the optional YAML header of a Markdown write-up.
type frontMatter struct {
	ID              string     `yaml:"id"`
	Title           string     `yaml:"title"`
	Date            string     `yaml:"date"`
	Organisation    string     `yaml:"organisation"`
	Organization    string     `yaml:"organization"`
	Org             string     `yaml:"org"`
	Severity        string     `yaml:"severity"`
	Likelihood      string     `yaml:"likelihood"`
	TellApart       string     `yaml:"tell_apart"`
	Tags            stringList `yaml:"tags"`
	Services        stringList `yaml:"services"`
	Overlaps        stringList `yaml:"overlaps"`
	Causes          stringList `yaml:"causes"`
	Pin             stringList `yaml:"pin"`
	Pins            stringList `yaml:"pins"`
	Signatures      stringList `yaml:"signatures"`
	Examples        stringList `yaml:"examples"`
	Counterexamples stringList `yaml:"counterexamples"`
}

// stringList accepts a YAML list or a comma-separated string.
type stringList []string

// UnmarshalYAML implements yaml.InterfaceUnmarshaler.
func (l *stringList) UnmarshalYAML(unmarshal func(any) error) error {
	var list []any
	if err := unmarshal(&list); err == nil {
		for _, v := range list {
			if s := strings.TrimSpace(fmt.Sprint(v)); s != "" && v != nil {
				*l = append(*l, s)
			}
		}
		return nil
	}
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("want a list or a string")
	}
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// splitFrontMatter separates a leading "---" YAML block from the body. It
// returns the YAML, the body, and the byte offset of the body.
func splitFrontMatter(data []byte) (fm, body []byte, off int) {
	if !bytes.HasPrefix(data, []byte("---\n")) && !bytes.HasPrefix(data, []byte("---\r\n")) {
		return nil, data, 0
	}
	start := bytes.IndexByte(data, '\n') + 1
	for i := start; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		line := data[i:]
		next := len(data)
		if end >= 0 {
			line, next = data[i:i+end], i+end+1
		}
		if t := bytes.TrimRight(line, " \t\r"); bytes.Equal(t, []byte("---")) || bytes.Equal(t, []byte("...")) {
			return data[start:i], data[next:], next
		}
		i = next
	}
	return nil, data, 0 // no closing line: not front matter
}

func parseFrontMatter(src []byte) (fm frontMatter, err error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return fm, nil
	}
	// The YAML decoder panics on some malformed input (found by fuzzing:
	// a tag on a list field); a write-up must never crash incidex.
	defer func() {
		if r := recover(); r != nil {
			fm, err = frontMatter{}, errors.New("front matter: malformed YAML")
		}
	}()
	if err := yaml.Unmarshal(src, &fm); err != nil {
		return fm, fmt.Errorf("front matter: %s", firstLine(err.Error()))
	}
	return fm, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
