// Package site owns the site profile: the one declarative input of a run. It defines the types,
// decodes YAML strictly with line numbers, fills defaults and validates every rule at once.
package site
