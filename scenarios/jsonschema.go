package scenarios

import (
	"bytes"
	"encoding/json"
	"slices"
)

// JSONSchemaID is where editors may fetch the schema from; `mayday schema` prints the same.
const JSONSchemaID = "https://raw.githubusercontent.com/mayday-sim/mayday/main/docs/scenario.schema.json"

// Patterns of the value syntax (see ParseDuration and ParseRate), for editors. They accept
// what the decoder accepts, except that range limits (about 290 years) are not expressed.
const (
	durationUnits   = `(ns|us|µs|μs|ms|s|m|h|d)`
	decimal         = `([0-9]+\.?[0-9]*|\.[0-9]+)`
	durationPattern = `^(` + decimal + durationUnits + `)+$`
	ratePattern     = `^\s*` + decimal + `\s*/\s*(` + decimal + `?` + durationUnits + `)+\s*$`
	rateAboveZero   = `^\s*[0.]*[1-9]`
)

// JSONSchema is a JSON Schema (draft 2020-12) of the scenario file format, generated from
// the key tree the decoder checks files against: every key with its description, the enums
// the decoder accepts, the keys each fault kind takes, the bounds of every value (those the
// key declares, and the size model's on single keys: sizeMaximum). A file the schema refuses
// is one the decoder refuses; the decoder checks more (cross references such as fault tools,
// ranges between keys such as max >= initial, the size model's limits on products of keys
// and on the length of a duration).
func JSONSchema() []byte {
	s := node(rootSchema)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = JSONSchemaID
	s["title"] = "mayday scenario"
	s["type"] = "object"
	s["required"] = []string{"name", "tools"}
	props := s["properties"].(map[string]any)
	tools := props["tools"].(map[string]any)
	tools["type"], tools["minProperties"], tools["maxProperties"] = "object", 1, MaxTools
	tools["propertyNames"] = object{"maxLength": MaxNameLen}
	props["name"].(map[string]any)["maxLength"] = MaxNameLen
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep ">= 0.95" readable in descriptions
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		panic("scenarios: the JSON Schema does not encode: " + err.Error())
	}
	return b.Bytes()
}

type object = map[string]any

func node(sch *schema) object {
	o := object{}
	switch sch.kind {
	case kindAny:
		return o
	case kindMap:
		o = mapNode(sch)
		if sch.rangeOf != nil {
			o = object{"anyOf": []any{node(sch.rangeOf), o}}
		}
	case kindList:
		o = object{"type": []string{"array", "null"}, "items": node(sch.elem)}
	case kindText:
		o = object{"type": []string{"string", "number", "boolean", "null"}}
		if sch.pattern != "" {
			// The pattern applies to text; a whole number or a boolean reads as its text
			// (123, true), which matches.
			o = object{"type": []string{"string", "integer", "boolean"}, "pattern": sch.pattern}
		}
	case kindInt:
		o = object{"type": "integer", "minimum": sch.min}
		if sch.max > 0 {
			o["maximum"] = sch.max
		}
		sizeBound(o, sch)
	case kindNumber:
		o = object{"type": "number"}
		if sch.signed {
			break
		}
		if sch.above {
			o["exclusiveMinimum"] = sch.min
		} else {
			o["minimum"] = sch.min
		}
		if sch.max > 0 {
			o["maximum"] = sch.max
		}
		sizeBound(o, sch)
	case kindProb:
		o = object{"type": "number", "minimum": 0, "maximum": 1}
		if sch.above {
			o = object{"type": "number", "exclusiveMinimum": 0, "maximum": 1}
		}
	case kindBool:
		o = object{"type": "boolean"}
	case kindDuration:
		o = durationNode()
		if sch.above {
			o = positiveDurationNode()
		}
	case kindRate:
		o = object{"type": "string", "pattern": ratePattern}
		if sch.above {
			// Above zero: its count has a digit other than 0 ("0/s" is refused).
			o["allOf"] = []any{object{"pattern": rateAboveZero}}
		}
	case kindEnum:
		o = object{"enum": sch.enum}
	case kindDurDist:
		o = distNode(durationUnit, sch)
	case kindCountDist:
		o = distNode(countUnit, sch)
	case kindProbByClass, kindDurDistByClass:
		o = byClassNode(sch)
	case kindActionOrMap:
		o = mapNode(sch)
		o = object{"anyOf": []any{object{"enum": sch.enum}, o}}
	case kindCheck:
		o = object{"type": "string"}
	case kindCompute:
		o = object{"anyOf": []any{object{"type": "number", "minimum": 0}, durationNode()}}
	}
	if sch.doc != "" {
		o["description"] = sch.doc
		if d := sch.defaultText(); d != "" {
			o["description"] = sch.doc + " (default " + d + ")"
		}
	}
	return o
}

func durationNode() object {
	return object{"anyOf": []any{object{"type": "string", "pattern": durationPattern}, object{"const": 0}}}
}

// positiveDurationNode is a duration above zero (horizon): written with a digit other than 0
// somewhere ("0s", "0.0m" and 0 are zero, "0.5s" is not).
func positiveDurationNode() object {
	return object{"anyOf": []any{object{"type": "string", "pattern": durationPattern, "allOf": []any{object{"pattern": nonZeroDigit}}}}}
}

// nonZeroDigit: a duration that matches durationPattern is above zero when one of its digits
// is not 0.
const nonZeroDigit = "[1-9]"

// sizeBound lowers o's maximum to the size model's bound on sch (sizeMaximum), which
// Validate applies on top of the key's declared range.
func sizeBound(o object, sch *schema) {
	m, ok := sizeMaximum(sch)
	if !ok {
		return
	}
	if cur, has := o["maximum"].(float64); !has || m < cur {
		o["maximum"] = m
	}
}

func mapNode(sch *schema) object {
	if sch.sub == nil {
		o := object{"type": []string{"object", "null"}}
		switch {
		case sch.elem != nil && sch.elem == toolSchema:
			o["additionalProperties"] = nullable(node(sch.elem)) // `search:` is a tool with defaults
		case sch.elem != nil:
			o["additionalProperties"] = node(sch.elem)
		case sch == rootSchema.sub["sweep"]:
			o["additionalProperties"] = object{"type": "array", "minItems": 1}
		}
		if sch.keyEnum != nil {
			o["propertyNames"] = object{"enum": sch.keyEnum}
		} else if sch.keyPat != "" {
			pn := object{"pattern": sch.keyPat}
			if sch.keyMax > 0 {
				pn["minLength"], pn["maxLength"] = 1, sch.keyMax
			}
			o["propertyNames"] = pn
		}
		return o
	}
	props := object{}
	for _, k := range sch.keys {
		props[k] = node(sch.sub[k])
		// The decoder reads a key with a null value as absent; only the required top-level
		// keys must hold something.
		if !(sch == rootSchema && (k == "name" || k == "tools")) {
			props[k] = nullable(props[k].(object))
		}
	}
	o := object{"type": []string{"object", "null"}, "properties": props, "additionalProperties": false}
	if sch.one {
		o["type"], o["minProperties"], o["maxProperties"] = "object", 1, 1
	}
	switch sch {
	case faultSchema:
		o["type"], o["required"], o["allOf"] = "object", []string{"kind"}, faultRules()
	case recoverySchema.sub["supervisor"]:
		o["allOf"] = []any{
			ifThen("kind", "model", object{"required": []string{"accuracy"}}),
			object{"if": object{"not": object{"properties": object{"kind": object{"const": "model"}}, "required": []string{"kind"}}},
				"then": object{"propertyNames": object{"enum": []string{"kind"}}}},
		}
	case recoverySchema.sub["humans"]:
		o["required"] = []string{"reviewers"}
	}
	return o
}

// faultRules says, per fault kind, which keys it takes and which it requires: the lists the
// decoder checks (the registered rules).
func faultRules() []any {
	var rules []any
	for _, r := range faultTable {
		rules = append(rules, ifThen("kind", string(r.Kind), object{"required": r.Required, "propertyNames": object{"enum": r.allowed()}}))
	}
	return rules
}

// byClassNode is a value given once (the default key's schema), or a mapping of default and
// failure classes to such values.
func byClassNode(sch *schema) object {
	props := object{}
	for _, k := range sch.keys {
		props[k] = nullable(node(sch.sub[k]))
	}
	one := node(sch.sub["default"])
	delete(one, "description")
	return object{"anyOf": []any{one, object{"type": "object", "properties": props, "additionalProperties": false}}}
}

// distNode is a distribution: a single value (a constant), or {dist: FAMILY, ...} with the
// parameters of that family (distParams), durations or numbers as u says. Keys sch adds to
// the distribution's own (workload.tokens.growth) are allowed beside the parameters.
func distNode(u unit, sch *schema) object {
	param := func(p string) object {
		if u == durationUnit && p != "alpha" {
			return durationNode()
		}
		return object{"type": "number", "minimum": 0}
	}
	props := object{"dist": object{"enum": distKinds, "description": "the family"}}
	var extra []string
	for _, k := range sch.keys {
		if _, own := distSchema.sub[k]; !own {
			extra = append(extra, k)
			props[k] = nullable(node(sch.sub[k]))
		}
	}
	var rules []any
	for _, k := range distKinds {
		params := distParams(DistKind(k))
		for _, p := range params {
			props[p] = param(p)
		}
		names := append([]string{"dist"}, params...)
		names = append(names, extra...)
		rules = append(rules, ifThen("dist", k, object{"required": params, "propertyNames": object{"enum": names}}))
	}
	families := slices.Clone(distKinds)
	mapping := object{"type": "object", "required": []string{"dist"}, "properties": props, "additionalProperties": false, "allOf": rules,
		"description": "{dist: " + families[0] + ", ...}: one of " + orList(families)}
	return object{"anyOf": []any{param("value"), mapping}}
}

func ifThen(key, value string, then object) object {
	return object{
		"if":   object{"properties": object{key: object{"const": value}}, "required": []string{key}},
		"then": then,
	}
}

// nullable lets o also be null.
func nullable(o object) object {
	switch t := o["type"].(type) {
	case string:
		o["type"] = []string{t, "null"}
		return o
	case []string:
		if !slices.Contains(t, "null") {
			o["type"] = append(t, "null")
		}
		return o
	}
	if alts, ok := o["anyOf"].([]any); ok {
		o["anyOf"] = append(alts, object{"type": "null"})
		return o
	}
	if words, ok := o["enum"].([]string); ok {
		vals := make([]any, 0, len(words)+1)
		for _, w := range words {
			vals = append(vals, w)
		}
		o["enum"] = append(vals, nil)
	}
	return o
}
