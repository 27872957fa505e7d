package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// The SBOM is SPDX 2.3 JSON (https://spdx.github.io/spdx-spec/v2.3/) made
// from the module graph Go records in the binary (debug/buildinfo, what
// `go version -m` prints): one package for gpuform, one per module it
// links, each with its version, its go.sum hash (h1:) and a purl. The
// targets of one commit share one module graph but link different parts of
// it (windows binaries link go-winio, linux ones procfs), so the one SBOM of
// the release lists the modules of every target's binary.

type spdxDoc struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      spdxCreation   `json:"creationInfo"`
	Packages          []spdxPackage  `json:"packages"`
	Relationships     []spdxRelation `json:"relationships"`
}

type spdxCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string       `json:"name"`
	SPDXID           string       `json:"SPDXID"`
	VersionInfo      string       `json:"versionInfo"`
	DownloadLocation string       `json:"downloadLocation"`
	FilesAnalyzed    bool         `json:"filesAnalyzed"`
	LicenseConcluded string       `json:"licenseConcluded"`
	LicenseDeclared  string       `json:"licenseDeclared"`
	CopyrightText    string       `json:"copyrightText"`
	Comment          string       `json:"comment,omitempty"`
	ExternalRefs     []spdxExtRef `json:"externalRefs"`
}

type spdxExtRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelation struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// writeSBOM writes the SPDX document of the binaries bins to path: their
// modules together, since a module one target links may be missing from
// another's (cobra's mousetrap and go-winio are windows-only).
func writeSBOM(o options, bins []string, path string) error {
	var infos []*buildinfo.BuildInfo
	for _, bin := range bins {
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			return fmt.Errorf("read the build information of %s: %w", bin, err)
		}
		infos = append(infos, info)
	}
	if len(infos) == 0 {
		return fmt.Errorf("no binary to describe")
	}
	doc := sbom(o, infos[0].Main.Path, infos[0].GoVersion, modules(infos...))
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// module is one module of the graph: path, version, go.sum hash.
type module struct{ path, version, sum string }

// modules are the modules the binaries link, each once, sorted by path.
func modules(infos ...*buildinfo.BuildInfo) []module {
	seen := map[string]bool{}
	var out []module
	for _, info := range infos {
		for _, d := range info.Deps {
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			if !seen[m.Path] {
				seen[m.Path] = true
				out = append(out, module{path: m.Path, version: m.Version, sum: m.Sum})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// sbom is the SPDX document of the main module at o.version and its deps.
// Its namespace derives from its content, so that it is the same bytes
// every time.
func sbom(o options, mainPath, goVersion string, deps []module) spdxDoc {
	h := sha256.New()
	fmt.Fprintf(h, "%s@%s %s\n", mainPath, o.version, goVersion)
	for _, d := range deps {
		fmt.Fprintf(h, "%s@%s %s\n", d.path, d.version, d.sum)
	}
	doc := spdxDoc{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              "gpuform-" + o.version,
		DocumentNamespace: "https://gpuform.dev/spdx/gpuform-" + o.version + "-" + hex.EncodeToString(h.Sum(nil))[:16],
		CreationInfo:      spdxCreation{Created: o.time.Format("2006-01-02T15:04:05Z"), Creators: []string{"Tool: gpuform tools/dist", "Tool: " + goVersion}},
	}
	root := pkg(mainPath, o.version, "", "SPDXRef-Package-gpuform")
	doc.Packages = append(doc.Packages, root)
	doc.Relationships = append(doc.Relationships, spdxRelation{"SPDXRef-DOCUMENT", "DESCRIBES", root.SPDXID})
	for i, d := range deps {
		p := pkg(d.path, d.version, d.sum, fmt.Sprintf("SPDXRef-Package-%d", i+1))
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelation{root.SPDXID, "DEPENDS_ON", p.SPDXID})
	}
	return doc
}

func pkg(path, version, sum, id string) spdxPackage {
	p := spdxPackage{
		Name: path, SPDXID: id, VersionInfo: version, DownloadLocation: "NOASSERTION",
		LicenseConcluded: "NOASSERTION", LicenseDeclared: "NOASSERTION", CopyrightText: "NOASSERTION",
		ExternalRefs: []spdxExtRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + strings.ToLower(path) + "@" + version}},
	}
	if sum != "" {
		p.Comment = "go.sum hash " + sum
	}
	return p
}
