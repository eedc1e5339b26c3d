import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config';
import { dataSourceOptions } from './data-source';
import { DayPartitions } from './day-partitions';
import { Sql } from './sql';

/**
 * The database connection, shared by every feature: TypeORM, raw SQL on the same pool (Sql), and the day partitions
 * that exist (DayPartitions).
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config.database.url!, { statementTimeoutMs: config.database.statementTimeoutMs }),
        autoLoadEntities: true,
      }),
    }),
  ],
  providers: [Sql, DayPartitions],
  exports: [Sql, DayPartitions],
})
export class DatabaseModule {}
