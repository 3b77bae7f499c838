// Package secret recognises secrets: keys whose values are credentials (api_key,
// db_password), and values shaped like a credential wherever they appear, whatever key they
// sit under (an AWS access key id, an `sk-…` API key, a JWT, a GitHub or Slack token, a
// private-key block, the password of a URL).
//
// It only finds them. Package traces replaces what it finds by a keyed hash before a value
// reaches a trace; package scenarios masks it in error messages. The package imports only the
// standard library, so both can use it.
package secret
