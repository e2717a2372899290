package custody

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete or weaken the custody boundary's checks one at a time;
// each names the tests that must fail without the check.
var mutants = []mutation.Mutant{
	// Native custody's check at start.
	{Name: "CheckNamespace reads records without opening them", File: "native.go",
		Edits: []mutation.Edit{{Old: "\t\ts, err := n.keys.Open(rec.Binding, rec.Sealed)\n", New: "\t\ts, err := NewSecret(rec.Sealed[:1]), error(nil)\n"}},
		Kills: "TestCheckNamespaceFindsForeignRecords"},

	// The Secret.
	{Name: "Format prints the bytes", File: "secret.go",
		Edits: []mutation.Edit{{Old: "\t_, _ = f.Write([]byte(redacted))\n}", New: "\tif s.box != nil {\n\t\t_, _ = f.Write(s.box().b)\n\t}\n}"}},
		Kills: "TestSecretFmtNeverLeaks"},
	{Name: "reveal's private copy not cleared", File: "secret.go",
		Edits: []mutation.Edit{{Old: "\tdefer clear(tmp)\n", New: "\n"}}, Kills: "TestSecretRevealAndDestroy"},
	{Name: "Destroy not zeroing", File: "secret.go",
		Edits: []mutation.Edit{{Old: "\tclear(box.b)\n\tbox.b = nil\n", New: "\tbox.b = nil\n"}}, Kills: "TestSecretRevealAndDestroy|TestSecretBufferSizes"},
	{Name: "destroyed check in reveal", File: "secret.go",
		Edits: []mutation.Edit{{Old: "\tif box.destroyed {\n\t\tbox.mu.Unlock()\n\t\treturn checkfu.Refuse(CodeSecretDestroyed", New: "\tif false {\n\t\tbox.mu.Unlock()\n\t\treturn checkfu.Refuse(CodeSecretDestroyed"}},
		Kills: "TestSecretRevealAndDestroy"},
	{Name: "inline box given the whole array", File: "secret.go",
		Edits: []mutation.Edit{{Old: "buf := bytes(&a.buf)[:n:n]", New: "buf := bytes(&a.buf)"}}, Kills: "TestSecretBufferSizes"},

	// The associated data.
	{Name: "AD without the handle", File: "seal.go",
		Edits: []mutation.Edit{{Old: "\tdst = appendLPString(dst, b.Handle.String())\n", New: "\n"}}, Kills: "TestADLayout|TestSealMatchesReference"},
	{Name: "AD without the key version", File: "seal.go",
		Edits: []mutation.Edit{{Old: "return append(dst, 0, 0, 0, 4, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))", New: "return dst"}},
		Kills: "TestADLayout|TestKeyVersionIsBound"},
	{Name: "AD without length prefixes", File: "seal.go",
		Edits: []mutation.Edit{{Old: "\tdst = appendLPString(dst, b.Namespace)\n\tdst = appendLPString(dst, b.Integration)\n", New: "\tdst = append(dst, b.Namespace...)\n\tdst = append(dst, b.Integration...)\n"}},
		Kills: "TestADDistinguishesEveryComponent"},
	{Name: "AD components reordered", File: "seal.go",
		Edits: []mutation.Edit{{Old: "\tdst = appendLPString(dst, b.Namespace)\n\tdst = appendLPString(dst, b.Integration)\n", New: "\tdst = appendLPString(dst, b.Integration)\n\tdst = appendLPString(dst, b.Namespace)\n"}},
		Kills: "TestADLayout|TestSealMatchesReference"},
	{Name: "AD scratch one byte short", File: "seal.go",
		Edits: []mutation.Edit{{Old: "address.HandleLen + 4\n", New: "address.HandleLen + 3\n"}}, Kills: "TestADScratchHoldsTheLongestAD"},

	// Records.
	{Name: "length check in SealedKeyVersion", File: "seal.go",
		Edits: []mutation.Edit{{Old: "if len(sealed) < SealOverhead || len(sealed) > MaxSealedBytes || sealed[0] != sealFormat {", New: "if len(sealed) > 0 && (len(sealed) > MaxSealedBytes || sealed[0] != sealFormat) {"}}, Kills: "TestOpenRefusals"},
	{Name: "format check", File: "seal.go",
		Edits: []mutation.Edit{{Old: "if len(sealed) < SealOverhead || len(sealed) > MaxSealedBytes || sealed[0] != sealFormat {", New: "if len(sealed) < SealOverhead || len(sealed) > MaxSealedBytes {"}}, Kills: "TestOpenRefusals"},
	{Name: "binding validation in Open", File: "seal.go",
		Edits: []mutation.Edit{{Old: "func (ks *Keyset) Open(b Binding, sealed []byte) (*Secret, error) {\n\tif err := b.Validate(); err != nil {", New: "func (ks *Keyset) Open(b Binding, sealed []byte) (*Secret, error) {\n\tif err := b.Validate(); false && err != nil {"}},
		Kills: "TestOpenRefusals"},
	{Name: "Seal without the secret bound", File: "seal.go",
		Edits: []mutation.Edit{{Old: "\tif len(box.b) > MaxSecretBytes {\n", New: "\tif false {\n"}}, Kills: "TestSealBoundsTheSecret"},
	{Name: "Open without the record bound", File: "seal.go",
		Edits: []mutation.Edit{{Old: "if len(sealed) < SealOverhead || len(sealed) > MaxSealedBytes || sealed[0] != sealFormat {", New: "if len(sealed) < SealOverhead || sealed[0] != sealFormat {"}},
		Kills: "TestOpenBoundsTheRecord"},
	// Refused as before, but after copying the record: only the test's
	// allocation bound (measured alone, alloctest.Alone) can see it.
	{Name: "Open copies an oversized record before refusing it", File: "seal.go",
		Edits: []mutation.Edit{{Old: "if len(sealed) < SealOverhead || len(sealed) > MaxSealedBytes || sealed[0] != sealFormat {", New: "if c := append([]byte(nil), sealed...); len(sealed) < SealOverhead || len(sealed) > MaxSealedBytes || c[0] != sealFormat {"}},
		Kills: "TestOpenBoundsTheRecord"},
	{Name: "MemoryStore.List without its bound", File: "memorystore.go",
		Edits: []mutation.Edit{{Old: "\tif len(out) > MaxListBindings {\n", New: "\tif false {\n"}}, Kills: "TestMemoryStoreListBound"},

	// Keysets.
	{Name: "root lookup in aead", File: "keyset.go",
		Edits: []mutation.Edit{{Old: "\troot, ok := st.roots[v]\n\tif !ok {", New: "\troot, ok := st.roots[v]\n\tif !ok && false {"}}, Kills: "TestOpenRefusals"},
	{Name: "HKDF info without the namespace", File: "keyset.go",
		Edits: []mutation.Edit{{Old: "info := appendLP([]byte(subkeyLabel), []byte(namespace))", New: "info := []byte(subkeyLabel)"}}, Kills: "TestSealMatchesReference"},
	{Name: "subkey fast path ignores the version", File: "keyset.go",
		Edits: []mutation.Edit{{Old: "c.name.version == v && c.name.namespace == namespace", New: "c.name.namespace == namespace"}}, Kills: "TestSubkeyCacheSeparatesNamespacesAndVersions"},
	{Name: "subkey fast path ignores the namespace", File: "keyset.go",
		Edits: []mutation.Edit{{Old: "c.name.version == v && c.name.namespace == namespace", New: "c.name.version == v"}}, Kills: "TestSubkeyCacheSeparatesNamespacesAndVersions"},

	// Native.
	{Name: "Rewrap overwrites with Put", File: "native.go",
		Edits: []mutation.Edit{{Old: "return n.store.CompareAndSwap(ctx, rec.Binding, rec.Sealed, sealed)", New: "return n.store.Put(ctx, Record{Binding: rec.Binding, Sealed: sealed})"}},
		Kills: "TestRewrapNeverOverwritesANewerRecord"},
	{Name: "binding comparison in Native.get", File: "native.go",
		Edits: []mutation.Edit{{Old: "if rec.Binding != b {", New: "if false {"}}, Kills: "TestNativeRefusesAnotherRowsRecord"},
}
