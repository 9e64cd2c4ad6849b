import { describe, expect, it } from 'vitest';
import { ResponseBody } from '../../src/client/response-body.ts';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

describe('ResponseBody', () => {
  it('parses a JSON body on first read and returns the same value after', () => {
    const body = new ResponseBody('{"id":1,"tags":["a"]}', JSON_TYPE);
    const first = body.json;
    expect(first).toEqual({ id: 1, tags: ['a'] });
    expect(body.json).toBe(first);
  });

  it('gives undefined for a body that does not declare JSON, is empty or does not parse', () => {
    expect(new ResponseBody('{"id":1}', { 'content-type': 'text/plain' }).json).toBeUndefined();
    expect(new ResponseBody('{"id":1}', undefined).json).toBeUndefined();
    expect(new ResponseBody('', JSON_TYPE).json).toBeUndefined();
    expect(new ResponseBody('{"id":', JSON_TYPE).json).toBeUndefined();
  });

  it('keeps the text as received', () => {
    expect(new ResponseBody('<html>', { 'content-type': 'text/html' }).text).toBe('<html>');
  });
});
