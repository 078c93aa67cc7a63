package sqlstore

import (
	"testing"
	"testing/fstest"
)

func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name         string
		files        fstest.MapFS
		wantVersions []int
		wantErr      bool
	}{
		{
			name: "sorted by version, not by name",
			files: fstest.MapFS{
				"migrations/0010_later.sql": file("B"),
				"migrations/0002_usage.sql": file("A"),
				"migrations/0001_init.sql":  file("0"),
				"migrations/README.md":      file("not a migration"),
			},
			wantVersions: []int{1, 2, 10},
		},
		{name: "none", files: fstest.MapFS{}},
		{name: "no version", files: fstest.MapFS{"migrations/init.sql": file("")}, wantErr: true},
		{name: "version zero", files: fstest.MapFS{"migrations/0000_init.sql": file("")}, wantErr: true},
		{
			name: "same version twice",
			files: fstest.MapFS{
				"migrations/0002_a.sql": file(""),
				"migrations/002_b.sql":  file(""),
			},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := loadMigrations(tt.files)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error: %v", err, tt.wantErr)
			}
			var versions []int
			for _, m := range ms {
				versions = append(versions, m.version)
			}
			if len(versions) != len(tt.wantVersions) {
				t.Fatalf("versions %v, want %v", versions, tt.wantVersions)
			}
			for i := range versions {
				if versions[i] != tt.wantVersions[i] {
					t.Fatalf("versions %v, want %v", versions, tt.wantVersions)
				}
			}
		})
	}
}

func TestEmbeddedMigrations(t *testing.T) {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		for _, d := range []string{"sqlite", "postgres"} {
			if _, err := m.forDialect(Dialect{Name: d}); err != nil {
				t.Error(err)
			}
		}
		if m.version != i+1 {
			t.Errorf("migration %s has version %d, want %d: versions run 1, 2, 3, ... without gaps", m.name, m.version, i+1)
		}
	}
	if LatestVersion() != len(ms) || len(ms) == 0 {
		t.Errorf("LatestVersion = %d with %d migrations", LatestVersion(), len(ms))
	}
}

func TestForDialect(t *testing.T) {
	sqlite := Dialect{Name: "sqlite"}
	postgres := Dialect{Name: "postgres", BytewiseCollation: `COLLATE "C"`}
	tests := []struct {
		name, sql        string
		sqlite, postgres string
		wantErr          bool
	}{
		{name: "plain", sql: "CREATE TABLE t (id TEXT /*bytewise*/ PRIMARY KEY);",
			sqlite: "CREATE TABLE t (id TEXT  PRIMARY KEY);", postgres: `CREATE TABLE t (id TEXT COLLATE "C" PRIMARY KEY);`},
		{name: "one dialect's statements", sql: "A;\n/*only sqlite*/\nB /*bytewise*/;\n/*end only*/\nC;",
			sqlite: "A;\n\nB ;\n\nC;", postgres: "A;\n\nC;"},
		{name: "each dialect's", sql: "/*only postgres*/P;/*end only*//*only sqlite*/S;/*end only*/",
			sqlite: "S;", postgres: "P;"},
		{name: "unclosed", sql: "/*only sqlite*/ B;", wantErr: true},
		{name: "nested", sql: "/*only sqlite*/ /*only sqlite*/ B; /*end only*/ /*end only*/", wantErr: true},
		{name: "end alone", sql: "A; /*end only*/", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := migration{name: "0001_t.sql", sql: tt.sql}
			for _, c := range []struct {
				d    Dialect
				want string
			}{{sqlite, tt.sqlite}, {postgres, tt.postgres}} {
				got, err := m.forDialect(c.d)
				if (err != nil) != tt.wantErr {
					t.Fatalf("%s: error = %v, want error: %v", c.d.Name, err, tt.wantErr)
				}
				if err == nil && got != c.want {
					t.Errorf("%s: %q, want %q", c.d.Name, got, c.want)
				}
			}
		})
	}
}
