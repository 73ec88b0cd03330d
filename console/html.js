/** @module console/html — htm bound to Preact's h, shared by every page. */
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
