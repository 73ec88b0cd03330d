/**
 * @module console/pages/trace — Agent Process: what actually happened between nodes. A waterfall of one
 * question's calls (every call of the chosen record's W3C trace: start, duration, outcome, each
 * nested under the call that made it), calls per minute with the error rate, and the records newest first,
 * with live additions over SSE, filters (node, outcome), paging by cursor, and failures and empty
 * returns marked. `#/trace?id=<n>` highlights one record (other pages link facts to trace ids).
 * This file holds the page's state; what it reads is console/pages/trace-data.js, what it draws
 * console/pages/trace-views.js.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { fleet, toApiError, trace, traceStream } from '../api.js';
import { html } from '../html.js';
import { ErrorLine, LiveMark, useStream } from './common.js';
import { RECENT, linkedId, query, questionOf } from './trace-data.js';
import { TraceFilters, TracePictures, TraceTable } from './trace-views.js';

export { perMinute } from './trace-data.js';

/** @typedef {import('../types').TraceRecord} TraceRecord */
/** @typedef {import('./trace-data.js').Filter} Filter */

export function Trace() {
  const [filter, setFilter] = useState(/** @type {Filter} */ ({ node: '', outcome: '' }));
  const [records, setRecords] = useState(/** @type {TraceRecord[] | null} */ (null));
  const [recent, setRecent] = useState(/** @type {TraceRecord[]} */ ([]));
  const [nextBefore, setNextBefore] = useState(/** @type {number | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [nodes, setNodes] = useState(/** @type {string[]} */ ([]));
  const [target, setTarget] = useState(linkedId());
  const [picked, setPicked] = useState(/** @type {number | null} */ (null));
  const [question, setQuestion] = useState(/** @type {TraceRecord[]} */ ([]));
  // Bumped when the stream could not send what was missed: the first page is read again.
  const [reloads, setReloads] = useState(0);
  const filterRef = useRef(filter);
  filterRef.current = filter;

  /** The newest records (the questions' index) read again, beside those the stream brought. */
  const readRecent = () =>
    trace(query({ node: '', outcome: '' }, null, RECENT)).then(
      (p) => setRecent((rs) => [...rs, ...p.records.filter((r) => !rs.some((x) => x.id === r.id))]),
      () => {},
    );

  useEffect(() => {
    const on = () => (setTarget(linkedId()), setPicked(null));
    addEventListener('hashchange', on);
    fleet().then(
      (s) => setNodes([s.hub, ...s.nodes.map((n) => n.name)]),
      () => {},
    );
    readRecent();
    return () => removeEventListener('hashchange', on);
  }, []);

  // First page, again whenever the filter or the linked record changes: a linked record starts the page.
  useEffect(() => {
    let alive = true;
    setRecords(null);
    setError(null);
    trace(query(filter, target ? target + 1 : null)).then(
      (p) => alive && (setRecords(p.records), setNextBefore(p.nextBefore)),
      (e) => alive && setError(toApiError(e)),
    );
    return () => {
      alive = false;
    };
  }, [filter.node, filter.outcome, target, reloads]);

  // Live additions: one record per SSE message, listed when it passes the filter.
  const live = useStream(
    traceStream,
    (/** @type {TraceRecord} */ r) => {
      setRecent((rs) => [r, ...rs].slice(0, RECENT * 2));
      // A call of the question on show joins its waterfall as it happens.
      setQuestion((q) =>
        q[0]?.traceId && q[0].traceId === r.traceId && !q.some((x) => x.id === r.id)
          ? [...q, r]
          : q,
      );
      const f = filterRef.current;
      if ((f.node && r.to !== f.node) || (f.outcome && r.outcome !== f.outcome)) return;
      setRecords((rs) => (rs && !rs.some((x) => x.id === r.id) ? [r, ...rs] : rs));
    },
    [],
    () => (setReloads((n) => n + 1), readRecent()),
  );

  const older = () =>
    trace(query(filter, nextBefore)).then(
      (p) => (setRecords((rs) => [...(rs ?? []), ...p.records]), setNextBefore(p.nextBefore)),
      (e) => setError(toApiError(e)),
    );
  const failed = records?.filter((r) => r.outcome !== 'ok').length ?? 0;
  const chosen = picked ?? target;
  // The waterfall shows the question of the chosen record, else of the newest one listed.
  const anchor =
    records?.find((r) => r.id === chosen) ?? question.find((r) => r.id === chosen) ?? records?.[0];
  const anchorKey = anchor ? anchor.traceId || `record ${anchor.id}` : '';
  useEffect(() => {
    let alive = true;
    questionOf(anchor).then(
      (q) => alive && setQuestion(q),
      () => alive && setQuestion(anchor ? [anchor] : []),
    );
    return () => {
      alive = false;
    };
  }, [anchorKey]);

  return html`
    <h2>Agent Process <small><${LiveMark} live=${live} />${records ? ` · ${records.length} shown, ${failed} failed or empty` : ''}</small></h2>
    <${TraceFilters} filter=${filter} setFilter=${setFilter} nodes=${nodes} target=${target} />
    <${ErrorLine} error=${error} />
    <${TracePictures} question=${question} recent=${recent} chosen=${chosen} onSelect=${setPicked} />
    ${!records && !error ? html`<p class="muted">Loading the trace…</p>` : ''}
    ${records && !records.length ? html`<p class="muted empty-note">No calls recorded yet${filter.node || filter.outcome ? ' for this filter' : ''}.</p>` : ''}
    ${records?.length ? html`<${TraceTable} records=${records} chosen=${chosen} />` : ''}
    ${nextBefore ? html`<p><button type="button" class="older" onClick=${older}>Older</button></p>` : ''}`;
}
