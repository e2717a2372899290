package vendorkit_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

func TestCheckArgv(t *testing.T) {
	for _, c := range []struct {
		argv []string
		ok   bool
	}{
		{nil, false},
		{[]string{}, false},
		{[]string{""}, false},
		{[]string{"", "x"}, false},
		{[]string{"true"}, true},
		{[]string{"sh", ""}, true},
	} {
		err := vendorkit.CheckArgv("acme", c.argv)
		if c.ok != (err == nil) {
			t.Errorf("CheckArgv(%q) = %v, want ok %v", c.argv, err, c.ok)
		}
		if err != nil && (!errors.Is(err, checkfu.CodeConfigInvalid) || err.Error() != "refused: config_invalid: acme: a Command needs an argv") {
			t.Errorf("CheckArgv(%q) = %v (%T)", c.argv, err, err)
		}
	}
}

func TestEnvMap(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want map[string]string
	}{
		{nil, map[string]string{}},
		{[]string{"A=1", "B=", "C==x", "A=2"}, map[string]string{"A": "2", "B": "", "C": "=x"}},
	} {
		got, err := vendorkit.EnvMap("acme", c.env)
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("EnvMap(%q) = %v, %v; want %v", c.env, got, err, c.want)
		}
	}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"=secret"}, `refused: config_invalid: acme: env entry "" is not K=V`},
		{[]string{"A=1", "NOEQUALS"}, `refused: config_invalid: acme: env entry "NOEQUALS" is not K=V`},
	} {
		got, err := vendorkit.EnvMap("acme", c.env)
		if got != nil || !errors.Is(err, checkfu.CodeConfigInvalid) || err.Error() != c.want {
			t.Errorf("EnvMap(%q) = %v, %v; want %s", c.env, got, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("EnvMap(%q) quoted a value: %v", c.env, err)
		}
	}
}
