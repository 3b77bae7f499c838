package scenarios

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
)

// The example scenarios are YAML files beside this one, compiled into the binary so that
// `mayday run research-fleet` works from any folder.
//
//go:embed *.yaml
var examples embed.FS

// Default is the scenario commands use when none is named.
const Default = "research-fleet"

// Info describes one embedded example.
type Info struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	File        string `json:"file"` // file name inside the binary, e.g. research-fleet.yaml
}

// Embedded returns the text of the embedded example name (without .yaml).
func Embedded(name string) ([]byte, bool) {
	if !scenarioName.MatchString(name) {
		return nil, false
	}
	data, err := examples.ReadFile(name + ".yaml")
	if err != nil {
		return nil, false
	}
	return data, true
}

var listOnce = sync.OnceValue(func() []Info {
	entries, _ := fs.ReadDir(examples, ".")
	var out []Info
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok {
			continue
		}
		info := Info{Name: name, File: e.Name()}
		data, _ := examples.ReadFile(e.Name())
		if s, err := Parse("embedded:"+name, data, nil); err == nil {
			info.Description = s.Description
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
})

// List describes the embedded examples, sorted by name.
func List() []Info { return append([]Info(nil), listOnce()...) }

func embeddedNames() []string {
	var names []string
	for _, i := range List() {
		names = append(names, i.Name)
	}
	return names
}

// Load reads a scenario from a file path or, when no such file exists, from the embedded
// example of that name, and parses it with the `--set` overrides sets.
func Load(ref string, sets []string) (*Scenario, error) {
	ovs, err := ParseSets(ref, sets)
	if err != nil {
		return nil, err
	}
	return LoadOverrides(ref, ovs)
}

// LoadOverrides is Load with overrides already parsed (ParseSets, or a point of Expand).
func LoadOverrides(ref string, ovs []Override) (*Scenario, error) {
	data, file, embedded, err := read(ref)
	if err != nil {
		return nil, err
	}
	s, err := ParseOverrides(file, data, ovs)
	if err != nil {
		return nil, err
	}
	s.Source.Embedded = embedded
	return s, nil
}

// read finds ref: a regular file wins over an embedded example of the same name.
func read(ref string) (data []byte, file string, embedded bool, err error) {
	fail := func(msg string) error { return ErrorList{{File: ref, Msg: msg}} }
	fi, statErr := os.Stat(ref)
	if statErr == nil && fi.Mode().IsRegular() {
		data, err := os.ReadFile(ref)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, "", false, fail("cannot read the file: " + pe.Err.Error())
			}
			return nil, "", false, fail("cannot read the file: " + err.Error())
		}
		return data, ref, false, nil
	}
	if data, ok := Embedded(ref); ok {
		return data, "embedded:" + ref, true, nil
	}
	names := embeddedNames()
	switch {
	case statErr == nil && fi.IsDir():
		return nil, "", false, fail("is a folder; want a scenario file or one of the embedded scenarios: " + strings.Join(names, ", "))
	case strings.ContainsAny(ref, `/\`) || path.Ext(ref) != "":
		return nil, "", false, fail("no such file; want a scenario file or one of the embedded scenarios: " + strings.Join(names, ", "))
	}
	hint := didYouMean(ref, names)
	err = fail("no such file or embedded scenario" + hint + "; want a scenario file or one of: " + strings.Join(names, ", "))
	err.(ErrorList)[0].Suggestion = closest(ref, names)
	return nil, "", false, err
}
