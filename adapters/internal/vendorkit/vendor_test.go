package vendorkit_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/strictjson"
)

func offer(t *testing.T) vendorkit.Offer {
	allow, err := egress.NoNetwork().Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	return vendorkit.Offer{
		Vendor: "acme",
		Capability: admission.RunnerProviderCapability{
			NetworkModes: []string{"none", "unrestricted", "allowlist"},
			Platforms:    []string{"linux/amd64"},
		},
		Image:     "acme-base",
		Allowlist: allow,
	}
}

func TestCheckInstance(t *testing.T) {
	o := offer(t)
	for _, ok := range []adapters.InstanceSpec{
		{ID: "a", NetworkMode: "none"},
		{ID: "a", NetworkMode: "unrestricted", Platform: "linux/amd64"},
		{ID: "a", NetworkMode: "allowlist", RootImage: "acme-base"},
	} {
		p, err := vendorkit.CheckInstance(o, ok)
		if err != nil || p == nil {
			t.Errorf("%+v: %v, %v", ok, p, err)
		}
	}
	if p, _ := vendorkit.CheckInstance(o, adapters.InstanceSpec{NetworkMode: "allowlist"}); p != o.Allowlist {
		t.Errorf("allowlist mode applied %v, not the offer's policy", p)
	}
	for _, bad := range []struct {
		spec adapters.InstanceSpec
		text string
	}{
		{adapters.InstanceSpec{NetworkMode: "bridge"}, `acme: network mode "bridge" is not one of`},
		{adapters.InstanceSpec{NetworkMode: "none", Platform: "linux/s390x"}, "acme: the spec asks for a platform, image or limit this provider cannot apply"},
		{adapters.InstanceSpec{NetworkMode: "none", RootImage: "other"}, "acme: the spec asks for a platform"},
		{adapters.InstanceSpec{NetworkMode: "none", Limits: adapters.Limits{Pids: 1}}, "acme: the spec asks for a platform"},
	} {
		_, err := vendorkit.CheckInstance(o, bad.spec)
		if !errors.Is(err, adapters.CodeSpecUnsupported) || !strings.Contains(err.Error(), bad.text) {
			t.Errorf("%+v: %v, want spec_unsupported %q", bad.spec, err, bad.text)
		}
	}
	o.Allowlist = nil
	if _, err := vendorkit.CheckInstance(o, adapters.InstanceSpec{NetworkMode: "allowlist"}); !errors.Is(err, adapters.CodeSpecUnsupported) || !strings.Contains(err.Error(), `acme: network mode "allowlist" is not one this provider applies`) {
		t.Errorf("allowlist without a policy: %v", err)
	}
	o.Image = ""
	if _, err := vendorkit.CheckInstance(o, adapters.InstanceSpec{NetworkMode: "none", RootImage: "acme-base"}); !errors.Is(err, adapters.CodeSpecUnsupported) {
		t.Errorf("an image named where none may be: %v", err)
	}
}

func TestBaseURLProblem(t *testing.T) {
	for s, want := range map[string]int{
		"https://api.example":         vendorkit.BaseURLOK,
		"http://127.0.0.1:8080":       vendorkit.BaseURLOK,
		"http://[::1]:1":              vendorkit.BaseURLOK,
		"http://localhost":            vendorkit.BaseURLOK,
		"http://api.example":          vendorkit.BaseURLPlain,
		"ftp://api.example":           vendorkit.BaseURLPlain,
		"https://u:p@api.example":     vendorkit.BaseURLMalformed,
		"https://api.example/?q=1":    vendorkit.BaseURLMalformed,
		"https://api.example/#f":      vendorkit.BaseURLMalformed,
		"/relative":                   vendorkit.BaseURLMalformed,
		"https://%zz":                 vendorkit.BaseURLMalformed,
		"http://127.0.0.1.example.co": vendorkit.BaseURLPlain,
	} {
		if got := vendorkit.BaseURLProblem(s); got != want {
			t.Errorf("BaseURLProblem(%q) = %d, want %d", s, got, want)
		}
	}
}

// code is any code: the tests check that a Call carries its own.
const code = checkfu.CodeConfigInvalid

func answer(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body))}
}

func TestCallNeverQuotesTheBody(t *testing.T) {
	c := vendorkit.Call{Vendor: "acme", Code: code, Method: "POST", Path: "/x"}
	const canary = "sk-canary-0123456789"
	_, err := c.Read(answer(401, `{"echo":"`+canary+`"}`), 1<<10, 200, 201)
	if !errors.Is(err, code) || strings.Contains(err.Error(), canary) {
		t.Fatalf("error %v", err)
	}
	if want := "acme: POST /x answered 401, not 200 (a 31-byte body, not quoted)"; !strings.HasSuffix(err.Error(), ": "+want) {
		t.Errorf("error %q, want %q", err, want)
	}
	data, err := c.Read(answer(201, `{}`), 1<<10, 200, 201)
	if err != nil || string(data) != "{}" {
		t.Errorf("Read = %q, %v", data, err)
	}
	if data, _ := c.Read(answer(200, "0123456789"), 4, 200); string(data) != "01234" {
		t.Errorf("Read past max+1: %q", data)
	}
}

func TestCallObject(t *testing.T) {
	c := vendorkit.Call{Vendor: "acme", Code: code, Method: "GET", Path: "/y"}
	opts := strictjson.Options{MaxDepth: 4, MaxBytes: 1 << 10}
	m, err := c.Object([]byte(`{"a":1}`), opts)
	if err != nil || len(m) != 1 {
		t.Fatalf("Object = %v, %v", m, err)
	}
	for data, text := range map[string]string{
		`{"a":1,"a":2}`: "acme: GET /y: the answer is not strict JSON",
		`[1]`:           "acme: GET /y: the answer is not an object",
	} {
		_, err := c.Object([]byte(data), opts)
		var r *checkfu.Refusal
		if !errors.As(err, &r) || r.Code != code || !strings.HasPrefix(r.Message, text) {
			t.Errorf("Object(%s) = %v, want %q", data, err, text)
		}
	}
	err = c.Unanswered(io.ErrUnexpectedEOF)
	if !errors.Is(err, code) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), ": acme: GET /y was not answered") {
		t.Errorf("Unanswered = %v", err)
	}
}
