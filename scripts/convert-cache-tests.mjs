#!/usr/bin/env node
// Convert the HTTP caching test suite behind https://cache-tests.fyi
// (https://github.com/http-tests/cache-tests) into the fixtures that
// Tests/ErrandTests/Cache/Conformance/ runs:
//
//   node scripts/convert-cache-tests.mjs CHECKOUT [COMMIT]
//
// CHECKOUT is a checkout of that repository (its tests/ and results/ folders); COMMIT is the
// commit it holds (read with `git -C CHECKOUT rev-parse HEAD` when not given). It writes
//
//   Fixtures/cache-tests/tests.json            every test of every suite, its requests made explicit
//   Fixtures/cache-tests/browser-results.json  Chrome's, Firefox's and Safari's published results
//
// The suite's tests are JavaScript modules; the converter imports them (templates applied), so
// the fixture holds exactly what the suite's own client and server read. What is rewritten, and
// only in form: header lists become objects ({"name", "value"} or {"name", "delta"} for the
// suite's "magic" dates, seconds from the server's now; "check": false where the suite does not
// check a header the server sends), and expected headers say which comparison they ask for.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const [checkoutArgument, commitArgument] = process.argv.slice(2)
if (!checkoutArgument) {
  console.error('usage: node scripts/convert-cache-tests.mjs CHECKOUT [COMMIT]')
  process.exit(2)
}
const checkout = resolve(checkoutArgument)
const commit = commitArgument ??
  execFileSync('git', ['-C', checkout, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()
const committed = execFileSync('git', ['-C', checkout, 'show', '-s', '--format=%cs', commit], {
  encoding: 'utf8'
}).trim()
const output = join(dirname(fileURLToPath(import.meta.url)), '..', 'Fixtures', 'cache-tests')

const source = {
  repository: 'https://github.com/http-tests/cache-tests',
  commit,
  committed,
  converter: 'scripts/convert-cache-tests.mjs'
}

// A header the server sends or the client adds: a value, or a date `delta` seconds from the
// server's now (the suite's magic dates); `check` is false where the suite does not compare it.
function header (entry) {
  const [name, value, check] = entry
  const converted = { name }
  if (Number.isInteger(value)) converted.delta = value
  else converted.value = String(value)
  if (check === false) converted.check = false
  return converted
}

// An expected response header: present (a name alone), equal to a value or a magic date,
// greater than a number (`[name, '>', n]`), or equal to another header (`[name, '=', other]`).
function expectedResponseHeader (entry) {
  if (typeof entry === 'string') return { name: entry, test: 'present' }
  if (entry.length > 2) {
    if (entry[1] === '>') return { name: entry[0], test: 'greater', number: entry[2] }
    if (entry[1] === '=') return { name: entry[0], test: 'same', other: entry[2] }
    throw new Error(`unknown operator in ${JSON.stringify(entry)}`)
  }
  return { test: 'equals', ...header(entry) }
}

// A header expected absent: by name, or (a pair) absent or without that value.
function missingHeader (entry) {
  return typeof entry === 'string' ? { name: entry } : { name: entry[0], value: entry[1] }
}

// A request header the server checks: present (a name alone) or with a value.
function expectedRequestHeader (entry) {
  return typeof entry === 'string' ? { name: entry } : { name: entry[0], value: entry[1] }
}

const known = new Set([
  'request_method', 'request_headers', 'request_body', 'query_arg', 'filename', 'mode',
  'credentials', 'cache', 'redirect', 'pause_after', 'disconnect', 'magic_locations', 'magic_ims',
  'rfc850date', 'response_status', 'response_headers', 'response_body', 'interim_responses',
  'response_pause', 'check_body', 'expected_type', 'expected_method', 'expected_status',
  'expected_request_headers', 'expected_request_headers_missing', 'expected_response_headers',
  'expected_response_headers_missing', 'expected_response_text', 'expected_interim_responses',
  'setup', 'setup_tests'
])

function request (raw) {
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) throw new Error(`unknown request member ${key}`)
  }
  const converted = {}
  for (const [key, value] of Object.entries(raw)) {
    switch (key) {
      case 'request_headers':
      case 'response_headers':
        converted[key] = value.map(header)
        break
      case 'expected_response_headers':
        converted[key] = value.map(expectedResponseHeader)
        break
      case 'expected_response_headers_missing':
        converted[key] = value.map(missingHeader)
        break
      case 'expected_request_headers':
      case 'expected_request_headers_missing':
        converted[key] = value.map(expectedRequestHeader)
        break
      case 'response_status':
        converted.response_status = value[0]
        converted.response_reason = value[1]
        break
      case 'interim_responses':
      case 'expected_interim_responses':
        converted[key] = value.map(([status, headers = []]) => ({
          status, headers: headers.map(header)
        }))
        break
      default:
        converted[key] = value
    }
  }
  return converted
}

const suitesModule = await import(pathToFileURL(join(checkout, 'tests', 'index.mjs')).href)
const suites = suitesModule.default.map(suite => ({
  id: suite.id,
  name: suite.name,
  tests: suite.tests.map(test => ({
    id: test.id,
    name: test.name,
    kind: test.kind ?? 'required',
    depends_on: test.depends_on ?? [],
    browser_only: test.browser_only === true,
    browser_skip: test.browser_skip === true,
    cdn_only: test.cdn_only === true,
    requests: test.requests.map(request)
  }))
}))

// The browsers' results as published: `true`, or the error the suite's client recorded.
const resultsModule = await import(pathToFileURL(join(checkout, 'results', 'index.mjs')).href)
const browsers = resultsModule.default.filter(entry => entry.type === 'browser').map(entry => {
  const raw = JSON.parse(readFileSync(join(checkout, 'results', entry.file), 'utf8'))
  const results = {}
  for (const id of Object.keys(raw).sort()) {
    const result = raw[id]
    results[id] = result === true
      ? { passed: true }
      : { passed: false, error: String(result[0]), message: String(result[1] ?? '') }
  }
  return { name: entry.name, version: entry.version, results }
})

mkdirSync(output, { recursive: true })
writeFileSync(join(output, 'tests.json'), JSON.stringify({ source, suites }, null, 2) + '\n')
writeFileSync(
  join(output, 'browser-results.json'), JSON.stringify({ source, browsers }, null, 2) + '\n')
const count = suites.reduce((sum, suite) => sum + suite.tests.length, 0)
console.log(`${count} tests in ${suites.length} suites, ${browsers.length} browsers, from ${commit}`)
