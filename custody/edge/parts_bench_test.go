package edge

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
)

// BenchmarkRefuseEcho measures the echo check alone on a 1 KiB answer
// shaped like a provider's, with the headers a provider sends.
func BenchmarkRefuseEcho(b *testing.B) {
	s := custody.NewSecret([]byte("ghp_EDGECANARY0123456789abcdefXYZ"))
	h := http.Header{"Content-Type": {"application/json"}, "Date": {"Tue, 01 Dec 2026 14:51:28 GMT"}, "Content-Length": {"1024"}}
	b.ReportAllocs()
	for b.Loop() {
		if err := refuseEcho(s, testBinding(), h, benchPage); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPage is a 1 KiB answer shaped like a real provider's: a JSON list
// of issues with URLs, and issue bodies with "\r\n" and "\"" escapes, so
// that the echo check's JSON view, line-break view and repeated views all
// run, as they do on real traffic.
var benchPage = func() []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := 0; b.Len() < 1024-160; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"url":"https://api.example.com/repos/acme/app/issues/%d","title":"Crash on start %d","state":"open","body":"Steps:\r\n1. run \"app\"\r\n2. see the crash"}`, 1000+i, i, i)
	}
	b.WriteString("]")
	for b.Len() < 1024 {
		b.WriteString(" ")
	}
	return []byte(b.String())
}()
