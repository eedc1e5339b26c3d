import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config';
import { dataSourceOptions } from './data-source';
import { Sql } from './sql';

/** The database connection, shared by every feature: TypeORM, and raw SQL on the same pool (Sql). */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({ ...dataSourceOptions(config.database.url!), autoLoadEntities: true }),
    }),
  ],
  providers: [Sql],
  exports: [Sql],
})
export class DatabaseModule {}
