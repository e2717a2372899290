package edge

import "testing"

// TestParseTokenResponseStrict: a token response is read with
// internal/strictjson. A duplicated or case-folded member, which
// encoding/json would resolve silently (last one wins, case folded), is
// refused; members the refresher does not read are allowed.
func TestParseTokenResponseStrict(t *testing.T) {
	for _, bad := range []string{
		`{"access_token":"a","access_token":"b","expires_in":60}`,
		`{"ACCESS_TOKEN":"a","expires_in":60}`,
		`{"access_token":"a","expires_in":60} {}`,
		`{"access_token":1,"expires_in":60}`,
		`{"access_token":"a","expires_in":"60"}`,
		`{"access_token":"a","expires_in":60.5}`,
		`["access_token"]`,
		"{\"access_token\":\"\xff\",\"expires_in\":60}",
	} {
		if tr, err := parseTokenResponse([]byte(bad)); err == nil && tr.AccessToken != "" && tr.ExpiresIn > 0 {
			t.Errorf("parseTokenResponse(%q) = %+v, want a refusal", bad, tr)
		}
	}
	tr, err := parseTokenResponse([]byte(`{"access_token":"a","token_type":"bearer","expires_in":60,"refresh_token":"r","scope":"repo","id_token":null}`))
	if err != nil || tr != (tokenResponse{AccessToken: "a", TokenType: "bearer", ExpiresIn: 60, RefreshToken: "r"}) {
		t.Fatalf("parseTokenResponse = %+v, %v", tr, err)
	}
}
