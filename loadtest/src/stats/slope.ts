export interface LinearFit {
  /** Change of y per unit of x. */
  readonly slope: number;
  /** Standard error of the slope (0 with fewer than three points). */
  readonly slopeStdError: number;
  readonly points: number;
}

/**
 * Ordinary least squares of y on x. Undefined with fewer than two points or when every x
 * is the same (no slope to fit).
 */
export function leastSquares(points: readonly { x: number; y: number }[]): LinearFit | undefined {
  const n = points.length;
  if (n < 2) return undefined;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.x - mx) ** 2;
    sxy += (p.x - mx) * (p.y - my);
  }
  if (sxx === 0) return undefined;
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  const residuals = points.reduce((a, p) => a + (p.y - intercept - slope * p.x) ** 2, 0);
  const slopeStdError = n > 2 ? Math.sqrt(residuals / (n - 2) / sxx) : 0;
  return { slope, slopeStdError, points: n };
}
