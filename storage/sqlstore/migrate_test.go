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
		if m.version != i+1 {
			t.Errorf("migration %s has version %d, want %d: versions run 1, 2, 3, ... without gaps", m.name, m.version, i+1)
		}
	}
	if LatestVersion() != len(ms) || len(ms) == 0 {
		t.Errorf("LatestVersion = %d with %d migrations", LatestVersion(), len(ms))
	}
}
