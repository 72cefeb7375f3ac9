export interface IndexRow {
  readonly Symbol: string;
  readonly ShortDescriptionPt?: string;
  readonly ShortDescription?: string;
  readonly FileName: string;
  /** Release window cells; the index gets these columns when any row has one. */
  readonly AvailableFrom?: string;
  readonly AvailableUntil?: string;
}

/** A row for a test index; override only what the test is about. */
export function buildIndexRow(overrides: Partial<IndexRow> & Pick<IndexRow, 'Symbol'>): IndexRow {
  return {
    ShortDescriptionPt: `Descrição de ${overrides.Symbol}`,
    ShortDescription: `Description of ${overrides.Symbol}`,
    FileName: `data/${overrides.Symbol.toLowerCase()}.csv`,
    ...overrides,
  };
}

/** An index CSV as vendors export it: BOM, CRLF, every cell quoted, an extra column. */
export function buildIndexCsv(rows: readonly IndexRow[]): string {
  const quote = (value: string) => `"${value.replace(/"/g, '""')}"`;
  const windows = rows.some((row) => row.AvailableFrom !== undefined || row.AvailableUntil !== undefined);
  const lines = [
    `Symbol,ShortDescriptionPt,ShortDescription,FileName,Category${windows ? ',AvailableFrom,AvailableUntil' : ''}`,
    ...rows.map((row) =>
      [
        row.Symbol,
        row.ShortDescriptionPt ?? '',
        row.ShortDescription ?? '',
        row.FileName,
        'test',
        ...(windows ? [row.AvailableFrom ?? '', row.AvailableUntil ?? ''] : []),
      ]
        .map(quote)
        .join(','),
    ),
  ];
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}
