//go:build duckdb_arrow && scratch
package analysis
import ("testing";"database/sql")
func TestQ(t *testing.T) {
	db, _ := sql.Open("duckdb", "")
	for _, q := range []string{"SELECT (MAP {'a':'b'})['a']::VARCHAR", "SELECT typeof((MAP {'a':'b'})['a'])", "SELECT typeof(map_extract_value(MAP {'a':'b'}, 'a'))", "SELECT version()"} {
		var v any
		err := db.QueryRow(q).Scan(&v)
		t.Log(q, v, err)
	}
}
